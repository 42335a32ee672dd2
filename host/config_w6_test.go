package host

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestW6_MaxModuleBytesIsValidated: hotSwap.maxModuleBytes defaults to 64
// MiB with a source, must not be negative, and means nothing without a
// source.
func TestW6_MaxModuleBytesIsValidated(t *testing.T) {
	parse := func(hs map[string]any) (*Config, error) {
		m := validConfig()
		projection0(m)["hotSwap"] = hs
		b, _ := json.Marshal(m)
		return ParseConfig(b)
	}
	cfg, err := parse(map[string]any{"watch": true})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Effective().Projections[0].HotSwap.MaxModuleBytes; got != 64<<20 {
		t.Errorf("default maxModuleBytes %d, want 64 MiB", got)
	}
	if sc := cfg.Effective().Projections[0].HotSwap.SourceConfig(); sc.MaxModuleBytes != 64<<20 {
		t.Errorf("swap form's maxModuleBytes %d, want 64 MiB", sc.MaxModuleBytes)
	}
	for _, c := range []struct {
		hs   map[string]any
		want string
	}{
		{map[string]any{"watch": true, "maxModuleBytes": -1}, "hotSwap.maxModuleBytes: -1 is negative"},
		{map[string]any{"maxModuleBytes": 1024}, "hotSwap.maxModuleBytes is set but neither watch nor s3 is"},
	} {
		if _, err := parse(c.hs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("hotSwap %v: %v; want %q", c.hs, err, c.want)
		}
	}
}
