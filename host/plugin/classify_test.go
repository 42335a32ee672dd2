package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host/plugin"
)

// TestW4_InstanceStartTimeoutIsATimeout: when a call needs a new instance
// and its _initialize runs out of time, the call fails with ErrTimeout
// naming the limit, not as a trap.
func TestW4_InstanceStartTimeoutIsATimeout(t *testing.T) {
	p := loadGuest(t, "trap", plugin.Config{CallTimeout: 2 * time.Second})
	start := fmt.Errorf("_initialize: %w after %s: %w", plugin.ErrTimeout, 2*time.Second, errors.New("module closed with context deadline exceeded"))
	err := p.ClassifyForTest(context.Background(), "evolve", fmt.Errorf("instantiate a new instance: %w", start))
	if !errors.Is(err, plugin.ErrTimeout) || errors.Is(err, plugin.ErrTrap) || !strings.Contains(err.Error(), "timeout after 2s") {
		t.Fatalf("err = %v, want a timeout after 2s", err)
	}
}
