package backoff

import (
	"context"
	"testing"
	"time"
)

func TestP10_DelayGrowsJitteredAndCapped(t *testing.T) {
	p := Policy{Base: 4 * time.Millisecond, Max: 100 * time.Millisecond}
	for attempt, nominal := range map[int]time.Duration{1: 4, 2: 8, 3: 16, 6: 100, 40: 100} {
		nominal *= time.Millisecond
		for i := 0; i < 200; i++ {
			d := p.Delay(attempt)
			if d < nominal/2 || d >= nominal*3/2 {
				t.Fatalf("attempt %d: delay %s outside [%s, %s)", attempt, d, nominal/2, nominal*3/2)
			}
		}
	}
}

func TestP10_DefaultBudgetIsAboutOnePointThreeSeconds(t *testing.T) {
	p := Policy{Base: 5 * time.Millisecond, Max: 200 * time.Millisecond}
	var total time.Duration
	for attempt := 1; attempt < 12; attempt++ { // 12 tries wait 11 times
		total += p.Base << (attempt - 1) // nominal, capped below
		if p.Base<<(attempt-1) > p.Max {
			total += p.Max - p.Base<<(attempt-1)
		}
	}
	if total < 1200*time.Millisecond || total > 1400*time.Millisecond {
		t.Fatalf("nominal budget %s, want about 1.3 s", total)
	}
}

func TestBackoff_SleepStopsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); err == nil {
		t.Fatal("Sleep outlived its context")
	}
}
