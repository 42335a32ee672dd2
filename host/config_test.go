package host

import (
	"strings"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host/plugin"
)

const baseConfig = `{
  "eventStore": {"table": "events", "schema": "shop", "schemaVersion": 1,
    "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": "p.wasm", "table": "rows",
    "checkpoint": {"field": "version"} %s}]
}`

func TestH4_ConfigurationParsesAndRefusesUnknownFields(t *testing.T) {
	cfg, err := ParseConfig([]byte(strings.Replace(baseConfig, "%s", `, "retry": {"attempts": 3, "base": "10ms"}`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Projections[0]; p.Retry.Attempts != 3 || p.Retry.Base.String() != "10ms" || p.Checkpoint.Field != "version" {
		t.Fatalf("parsed %+v", p)
	}
	_, err = ParseConfig([]byte(strings.Replace(baseConfig, "%s", `, "checkpiont": {}`, 1)))
	if err == nil || !strings.Contains(err.Error(), "checkpiont") {
		t.Fatalf("a misspelt option must be an error naming it, got %v", err)
	}
}

func TestP6_ReadModelsThatCannotWorkAreRefused(t *testing.T) {
	for _, feature := range []string{"versioned", "softDelete", "timeSeries"} {
		_, err := ParseConfig([]byte(strings.Replace(baseConfig, "%s", `, "readModel": {"`+feature+`": true}`, 1)))
		if err == nil || !strings.Contains(err.Error(), "[EDD-9081]") || !strings.Contains(err.Error(), feature) {
			t.Errorf("%s: got %v, want an [EDD-9081] refusal naming it", feature, err)
		}
	}
}

func TestW4_GuestLogConfigDefaultsAndOverride(t *testing.T) {
	withPlugins := func(plugins, projection string) string {
		s := strings.Replace(baseConfig, "%s", projection, 1)
		return strings.Replace(s, `"projections"`, `"plugins": `+plugins+`, "projections"`, 1)
	}
	tests := []struct {
		name, plugins, projection string
		want                      plugin.GuestLog
	}{
		{"off by default", `{}`, ``, plugin.GuestLog{}},
		{"plugins default", `{"guestLog": {"enabled": true, "rate": 5}}`, ``, plugin.GuestLog{Enabled: true, Rate: 5}},
		{"projection overrides field by field", `{"guestLog": {"enabled": true, "rate": 5, "burst": 20}}`,
			`, "guestLog": {"burst": 3}`, plugin.GuestLog{Enabled: true, Rate: 5, Burst: 3}},
		{"projection turns it off", `{"guestLog": {"enabled": true}}`, `, "guestLog": {"enabled": false}`, plugin.GuestLog{}},
		{"projection turns it on", `{}`, `, "guestLog": {"enabled": true}`, plugin.GuestLog{Enabled: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(withPlugins(tt.plugins, tt.projection)))
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.guestLog("summaries"); got != tt.want {
				t.Errorf("guestLog = %+v, want %+v", got, tt.want)
			}
		})
	}
	for _, bad := range []struct{ plugins, projection, fragment string }{
		{`{"guestLog": {"rate": -1}}`, ``, `plugins.guestLog.rate -1 is negative`},
		{`{}`, `, "guestLog": {"burst": -2}`, `projection "summaries".guestLog.burst -2 is negative`},
		{`{"guestLog": {"enable": true}}`, ``, `unknown field "enable"`},
	} {
		_, err := ParseConfig([]byte(withPlugins(bad.plugins, bad.projection)))
		if err == nil || !strings.Contains(err.Error(), bad.fragment) {
			t.Errorf("%s %s: got %v, want an error containing %q", bad.plugins, bad.projection, err, bad.fragment)
		}
	}
}

// TestW4_PluginsSandboxFromTheConfiguration: every sandbox setting of
// "plugins" reaches the plugin's Config, the pool covers the projection's
// row concurrency and the cache directory is relative to the file.
func TestW4_PluginsSandboxFromTheConfiguration(t *testing.T) {
	s := strings.Replace(baseConfig, "%s", "", 1)
	s = strings.Replace(s, `"projections"`, `"plugins": {"cacheDir": "cache", "cacheReadOnly": true, "poolSize": 2,
		"memoryLimitPages": 300, "callTimeout": "750ms", "maxLoopIterations": 5000000,
		"guestLog": {"enabled": true}}, "projections"`, 1)
	cfg, err := ParseConfig([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	cfg.dir = "/etc/dynafold"
	got := cfg.pluginConfig("summaries", 8, nil)
	want := plugin.Config{PoolSize: 8, MemoryLimitPages: 300, CallTimeout: 750 * time.Millisecond, MaxLoopIterations: 5000000,
		CacheDir: "/etc/dynafold/cache", CacheReadOnly: true, GuestLog: plugin.GuestLog{Enabled: true}}
	if got != want {
		t.Errorf("pluginConfig =\n%+v, want\n%+v", got, want)
	}
}
