package host

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/internal/testlogic"
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
		{`{"guestLog": {"rate": -1}}`, ``, `plugins.guestLog.rate: -1 is negative`},
		{`{}`, `, "guestLog": {"burst": -2}`, `projection "summaries".guestLog.burst: -2 is negative`},
		{`{"guestLog": {"enable": true}}`, ``, `unknown field "enable"`},
	} {
		_, err := ParseConfig([]byte(withPlugins(bad.plugins, bad.projection)))
		if err == nil || !strings.Contains(err.Error(), bad.fragment) {
			t.Errorf("%s %s: got %v, want an error containing %q", bad.plugins, bad.projection, err, bad.fragment)
		}
	}
}

// TestW4_PluginsSandboxFromTheConfiguration: every sandbox setting of
// "plugins" reaches the plugin's Config, the pool is poolSize whatever the
// projection's row concurrency (rows hold an instance only while they fold)
// and the cache directory is relative to the file.
func TestW4_PluginsSandboxFromTheConfiguration(t *testing.T) {
	s := strings.Replace(baseConfig, "%s", "", 1)
	s = strings.Replace(s, `"projections"`, `"plugins": {"cacheDir": "cache", "cacheReadOnly": true, "cacheKeyFile": "cache.key", "poolSize": 2,
		"memoryLimitPages": 300, "callTimeout": "750ms", "maxLoopIterations": 5000000,
		"guestLog": {"enabled": true}}, "projections"`, 1)
	cfg, err := ParseConfig([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	cfg.dir = "/etc/dynafold"
	got := cfg.pluginConfig("summaries", nil)
	want := plugin.Config{PoolSize: 2, MemoryLimitPages: 300, CallTimeout: 750 * time.Millisecond, MaxLoopIterations: 5000000,
		CacheDir: "/etc/dynafold/cache", CacheReadOnly: true, CacheKeyFile: "/etc/dynafold/cache.key", GuestLog: plugin.GuestLog{Enabled: true}}
	if got != want {
		t.Errorf("pluginConfig =\n%+v, want\n%+v", got, want)
	}
}

// validConfig is a minimal valid configuration as a JSON tree, for tests
// that break one thing in it.
func validConfig() map[string]any {
	return map[string]any{
		"eventStore": map[string]any{"table": "events", "schema": "shop", "schemaVersion": 1,
			"streams": []any{map[string]any{"name": "Order", "composite": []any{"orderId"}}}},
		"projections": []any{map[string]any{"name": "summaries", "plugin": "p.wasm", "table": "rows",
			"checkpoint": map[string]any{"field": "version"}}},
	}
}

func projection0(m map[string]any) map[string]any {
	return m["projections"].([]any)[0].(map[string]any)
}

func stream0(m map[string]any) map[string]any {
	return m["eventStore"].(map[string]any)["streams"].([]any)[0].(map[string]any)
}

func plugins(m map[string]any) map[string]any {
	if m["plugins"] == nil {
		m["plugins"] = map[string]any{}
	}
	return m["plugins"].(map[string]any)
}

// TestH4_ConfigMistakesRefused: every mistake is refused by ParseConfig
// with a message naming the field's JSON path and what is allowed.
func TestH4_ConfigMistakesRefused(t *testing.T) {
	const p = `projection "summaries".`
	tests := []struct {
		name   string
		change func(m map[string]any)
		want   []string
	}{
		{"unknown source", func(m map[string]any) { m["source"] = "lamda" },
			[]string{"source", `"lamda"`, `"lambda"`, `"pipe"`}},
		{"unknown decode failure policy", func(m map[string]any) { m["onDecodeFailure"] = "skipp" },
			[]string{"onDecodeFailure", `"skipp"`, `"report"`, `"skip"`}},
		{"source not a string", func(m map[string]any) { m["source"] = 1 },
			[]string{"source", `"lambda"`, `"pipe"`}},
		{"s3 interval not a duration", func(m map[string]any) {
			projection0(m)["hotSwap"] = map[string]any{"s3": map[string]any{"bucket": "b", "key": "k", "interval": "soon"}}
		}, []string{`projection "summaries".hotSwap.s3.interval`, `"soon"`, `"30s"`}},
		{"negative s3 interval", func(m map[string]any) {
			projection0(m)["hotSwap"] = map[string]any{"s3": map[string]any{"bucket": "b", "key": "k", "interval": "-1s"}}
		}, []string{p + "hotSwap.s3.interval", "negative", "positive duration"}},
		{"settle not a duration", func(m map[string]any) {
			projection0(m)["hotSwap"] = map[string]any{"watch": true, "settle": "later"}
		}, []string{`projection "summaries".hotSwap.settle`, `"later"`, `"200ms"`}},
		{"settle without watch", func(m map[string]any) {
			projection0(m)["hotSwap"] = map[string]any{"settle": "1s"}
		}, []string{p + "hotSwap.settle", `"watch": true`}},
		{"watch and s3", func(m map[string]any) {
			projection0(m)["hotSwap"] = map[string]any{"watch": true, "s3": map[string]any{"bucket": "b", "key": "k"}}
		}, []string{p + "hotSwap", "watch", "s3", "one source"}},
		{"s3 without bucket", func(m map[string]any) {
			projection0(m)["hotSwap"] = map[string]any{"s3": map[string]any{"key": "k"}}
		}, []string{p + "hotSwap.s3.bucket", "required"}},
		{"pin not a digest", func(m map[string]any) {
			projection0(m)["hotSwap"] = map[string]any{"sha256": []any{"abc"}}
		}, []string{p + "hotSwap.sha256[0]", "64 hexadecimal digits"}},
		{"fixture without rows", func(m map[string]any) {
			projection0(m)["hotSwap"] = map[string]any{"fixture": map[string]any{"events": "e.json"}}
		}, []string{p + "hotSwap.fixture.rows", "required"}},
		{"hot-swapped native logic", func(m map[string]any) {
			projection0(m)["plugin"] = "native:x"
			projection0(m)["hotSwap"] = map[string]any{"watch": true}
		}, []string{p + "hotSwap", "native", ".wasm"}},
		{"native without a name", func(m map[string]any) { projection0(m)["plugin"] = "native:" },
			[]string{p + "plugin", `"native:<name>"`}},
		{"negative pool size", func(m map[string]any) { plugins(m)["poolSize"] = -1 },
			[]string{"plugins.poolSize", "-1", "1 or more", "10"}},
		{"memory limit above 4 GiB", func(m map[string]any) { plugins(m)["memoryLimitPages"] = 70000 },
			[]string{"plugins.memoryLimitPages", "70000", "0 to 65536"}},
		{"negative memory limit", func(m map[string]any) { plugins(m)["memoryLimitPages"] = -1 },
			[]string{"plugins.memoryLimitPages", "-1", "0 to 65536"}},
		{"negative call timeout", func(m map[string]any) { plugins(m)["callTimeout"] = "-1s" },
			[]string{"plugins.callTimeout", "negative", "positive duration", "5s"}},
		{"negative loop budget", func(m map[string]any) { plugins(m)["maxLoopIterations"] = -5 },
			[]string{"plugins.maxLoopIterations", "-5", "positive", "0"}},
		{"read-only cache without a directory", func(m map[string]any) { plugins(m)["cacheReadOnly"] = true },
			[]string{"plugins.cacheReadOnly", "plugins.cacheDir"}},
		{"negative concurrency", func(m map[string]any) { projection0(m)["concurrency"] = -2 },
			[]string{p + "concurrency", "-2", "1 or more", "100"}},
		{"negative retry attempts", func(m map[string]any) { projection0(m)["retry"] = map[string]any{"attempts": -1} },
			[]string{p + "retry.attempts", "-1", "1 or more", "12"}},
		{"negative retry base", func(m map[string]any) { projection0(m)["retry"] = map[string]any{"base": "-5ms"} },
			[]string{p + "retry.base", "negative", "positive duration", "5ms"}},
		{"negative retry max", func(m map[string]any) { projection0(m)["retry"] = map[string]any{"max": "-1s"} },
			[]string{p + "retry.max", "negative", "positive duration", "200ms"}},
		{"retry base above max", func(m map[string]any) {
			projection0(m)["retry"] = map[string]any{"base": "300ms", "max": "100ms"}
		}, []string{p + "retry.base", "300ms", "at most", "100ms"}},
		{"retry base above the default max", func(m map[string]any) { projection0(m)["retry"] = map[string]any{"base": "1s"} },
			[]string{p + "retry.base", "1s", "at most", "200ms"}},
		{"retry attempts not a number", func(m map[string]any) { projection0(m)["retry"] = map[string]any{"attempts": "3"} },
			[]string{`projection "summaries".retry.attempts`, "whole number"}},
		{"negative schema version", func(m map[string]any) { m["eventStore"].(map[string]any)["schemaVersion"] = -1 },
			[]string{"eventStore.schemaVersion", "-1", "1 or more"}},
		{"checkpoint offset out of range", func(m map[string]any) {
			projection0(m)["checkpoint"] = map[string]any{"field": "version", "offset": int64(1) << 60}
		}, []string{p + "checkpoint.offset", "-9007199254740992 to 9007199254740992"}},
		{"no checkpoint field", func(m map[string]any) { projection0(m)["checkpoint"] = map[string]any{} },
			[]string{p + "checkpoint.field", "required", "revision"}},
		{"checkpoint in the key", func(m map[string]any) {
			projection0(m)["checkpoint"] = map[string]any{"field": "sk"}
		}, []string{p + "checkpoint.field", "[EDD-9081]", "key attribute"}},
		{"createdAt is the checkpoint", func(m map[string]any) { projection0(m)["createdAt"] = "version" },
			[]string{p + "createdAt", `"version"`, "checkpoint.field"}},
		{"empty key attribute", func(m map[string]any) { projection0(m)["key"] = []any{"pk", ""} },
			[]string{p + "key[1]", "empty"}},
		{"three key attributes", func(m map[string]any) { projection0(m)["key"] = []any{"a", "b", "c"} },
			[]string{p + "key", "1 or 2 attribute names"}},
		{"empty revision field", func(m map[string]any) { projection0(m)["revision"] = map[string]any{} },
			[]string{p + "revision.field", "required"}},
		{"duplicate stream names", func(m map[string]any) {
			es := m["eventStore"].(map[string]any)
			es["streams"] = append(es["streams"].([]any), map[string]any{"name": "Order", "composite": []any{"id"}})
		}, []string{"eventStore.streams[1].name", `"Order"`, "unique"}},
		{"stream without composite fields", func(m map[string]any) { delete(stream0(m), "composite") },
			[]string{"eventStore.streams[0].composite", "at least one field"}},
		{"empty composite field", func(m map[string]any) { stream0(m)["composite"] = []any{""} },
			[]string{"eventStore.streams[0].composite[0]", "empty"}},
		{"stream without a name", func(m map[string]any) { stream0(m)["name"] = "" },
			[]string{"eventStore.streams[0].name", "required"}},
		{"no streams", func(m map[string]any) { m["eventStore"].(map[string]any)["streams"] = []any{} },
			[]string{"eventStore.streams", "at least one"}},
		{"side-effect stream not defined", func(m map[string]any) { m["sideEffectStreams"] = []any{"Nope"} },
			[]string{"sideEffectStreams[0]", `"Nope"`, `defined: "Order"`}},
		{"empty projections", func(m map[string]any) { m["projections"] = []any{} },
			[]string{"no projections", "add at least one"}},
		{"absent projections", func(m map[string]any) { delete(m, "projections") },
			[]string{"no projections", "add at least one"}},
		{"duplicate projection names", func(m map[string]any) {
			m["projections"] = append(m["projections"].([]any), projection0(validConfig()))
		}, []string{"projections[1].name", `"summaries"`, "unique"}},
		{"projection without a name", func(m map[string]any) { delete(projection0(m), "name") },
			[]string{"projections[0].name", "required"}},
		{"projection without a table", func(m map[string]any) { delete(projection0(m), "table") },
			[]string{p + "table", "required"}},
		{"endpoint not a URL", func(m map[string]any) { m["endpoint"] = "localhost:8000" },
			[]string{"endpoint", `"localhost:8000"`, "http://"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := validConfig()
			tt.change(m)
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := ParseConfig(b)
			if err == nil {
				t.Fatalf("accepted: %s", b)
			}
			if cfg != nil {
				t.Errorf("a refused configuration comes back with %+v", cfg)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "SPEC") {
				t.Errorf("error %q names an internal SPEC item", err)
			}
		})
	}
	// The valid configuration itself passes.
	b, _ := json.Marshal(validConfig())
	if _, err := ParseConfig(b); err != nil {
		t.Fatalf("the valid configuration: %v", err)
	}
}

// TestH4_ValidateRefusesWhatIsBuiltInGo: the same checks run on a
// configuration written in Go, so New refuses it before any I/O.
func TestH4_ValidateRefusesWhatIsBuiltInGo(t *testing.T) {
	cfg := &Config{
		Source: "lamda", OnDecodeFailure: "skipp",
		EventStore: EventStoreConfig{Table: "events", Schema: "shop", Streams: []StreamConfig{{Name: "Order", Composite: []string{"id"}}}},
		Plugins:    PluginDefaults{MemoryLimitPages: 70000},
		Projections: []ProjectionConfig{{Name: "p", Plugin: "p.wasm", Table: "rows", Checkpoint: CheckpointConfig{Field: "v"},
			HotSwap: &HotSwapConfig{S3: &S3SourceConfig{Bucket: "b", Key: "k", Interval: Duration(-time.Second)}}}},
	}
	err := cfg.Validate()
	for _, w := range []string{`source: "lamda"`, `onDecodeFailure: "skipp"`, "plugins.memoryLimitPages: 70000", `projection "p".hotSwap.s3.interval`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Validate = %v, want %q in it", err, w)
		}
	}
	_, err = New(t.Context(), cfg)
	if err == nil || !strings.Contains(err.Error(), `source: "lamda"`) {
		t.Errorf("New = %v, want the configuration refused", err)
	}
}

// TestH4_StrictJSONRefusesCaseDuplicatesAndTrailingData: encoding/json
// would accept every one of these; ParseConfig names the key and where it
// is.
func TestH4_StrictJSONRefusesCaseDuplicatesAndTrailingData(t *testing.T) {
	valid, _ := json.Marshal(validConfig())
	body := string(valid[1 : len(valid)-1]) // the members, to add keys around them
	tests := []struct {
		name, json string
		want       []string
	}{
		{"field in other case", `{"plugins": {"poolsize": 4}, ` + body + `}`,
			[]string{`unknown field "poolsize" in plugins`, `did you mean "poolSize"?`}},
		{"misspelt field", `{"plugins": {"poolSzie": 4}, ` + body + `}`,
			[]string{`unknown field "poolSzie" in plugins`, `did you mean "poolSize"?`}},
		{"top-level field in other case", `{"Source": "pipe", ` + body + `}`,
			[]string{`unknown field "Source" in the top-level object`, `did you mean "source"?`}},
		{"nested field in other case", strings.Replace(string(valid), `"checkpoint"`, `"checkPoint"`, 1),
			[]string{`unknown field "checkPoint" in projection "summaries"`, `did you mean "checkpoint"?`}},
		{"unknown field far from any", `{"plugins": {"sandbox": true}, ` + body + `}`,
			[]string{`unknown field "sandbox" in plugins`, "poolSize", "callTimeout"}},
		{"duplicate key", `{"source": "lambda", "source": "pipe", ` + body + `}`,
			[]string{`duplicate key "source" in the top-level object`, "line 1"}},
		{"duplicate nested key", "{\"plugins\": {\"poolSize\": 1,\n \"poolSize\": 2}, " + body + `}`,
			[]string{`duplicate key "poolSize" in plugins`, "line 2"}},
		{"a second object", string(valid) + "\n" + string(valid),
			[]string{"after the end of the top-level object", "line 2"}},
		{"garbage after the object", string(valid) + " garbage",
			[]string{"after the end of the top-level object"}},
		{"wrong type", `{"plugins": {"poolSize": "4"}, ` + body + `}`,
			[]string{"plugins.poolSize", "want a whole number", `the string "4"`}},
		{"not JSON", `{"source": }`, []string{"invalid JSON", "line 1"}},
		{"truncated", `{"source": "pipe"`, []string{"invalid JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.json))
			if err == nil {
				t.Fatalf("accepted %s", tt.json)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
	// White space after the object is fine.
	if _, err := ParseConfig(append(valid, " \n\t"...)); err != nil {
		t.Errorf("trailing white space: %v", err)
	}
}

// TestH4_MinimalConfigGetsDocumentedDefaults: every documented default is
// what Effective gives a minimal configuration, and the same value the
// stages (apply, plugin, swap) still apply on their own.
func TestH4_MinimalConfigGetsDocumentedDefaults(t *testing.T) {
	b := []byte(`{"eventStore": {"table": "events", "schema": "shop", "streams": [{"name": "Order", "composite": ["orderId"]}]},
	  "projections": [
	    {"name": "a", "plugin": "a.wasm", "table": "rows", "checkpoint": {"field": "version"}},
	    {"name": "b", "plugin": "b.wasm", "table": "rows", "checkpoint": {"field": "version"}, "revision": {"field": "rev"},
	     "createdAt": "-", "guestLog": {"enabled": true},
	     "hotSwap": {"s3": {"bucket": "plugins", "key": "b.wasm"}}},
	    {"name": "c", "plugin": "c.wasm", "table": "rows", "checkpoint": {"field": "version"}, "hotSwap": {"watch": true}}]}`)
	cfg, err := ParseConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Effective()
	if err := e.Validate(); err != nil {
		t.Fatalf("the effective configuration is invalid: %v", err)
	}
	check := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	check("region", e.Region, "us-east-1")
	check("source", e.Source, SourceLambda)
	check("onDecodeFailure", e.OnDecodeFailure, DecodeFailureReport)
	check("eventStore.schemaVersion", e.EventStore.SchemaVersion, 1)
	check("plugins.poolSize", e.Plugins.PoolSize, 10)
	check("plugins.memoryLimitPages", e.Plugins.MemoryLimitPages, uint32(512))
	check("plugins.callTimeout", time.Duration(e.Plugins.CallTimeout), 5*time.Second)
	check("plugins.maxLoopIterations", e.Plugins.MaxLoopIterations, int64(0))
	check("plugins.guestLog", *e.Plugins.GuestLog, GuestLogConfig{Enabled: new(false), Rate: 10, Burst: 100})
	a, pb, c := e.Projections[0], e.Projections[1], e.Projections[2]
	check("key", a.Key, []string{"pk", "sk"})
	check("createdAt", a.CreatedAt, "createdAt")
	check("createdAt attribute", a.CreatedAtAttribute(), "createdAt")
	check("createdAt \"-\"", pb.CreatedAt, "-")
	check("createdAt \"-\" attribute", pb.CreatedAtAttribute(), "")
	check("writtenBy", a.WrittenBy, "")
	check("concurrency", a.Concurrency, 100)
	check("retry", a.Retry, RetryConfig{Attempts: 12, Base: Duration(5 * time.Millisecond), Max: Duration(200 * time.Millisecond)})
	check("revision.initial", *pb.Revision.Initial, int64(1))
	check("guestLog", *a.GuestLog, GuestLogConfig{Enabled: new(false), Rate: 10, Burst: 100})
	check("guestLog over plugins.guestLog", *pb.GuestLog, GuestLogConfig{Enabled: new(true), Rate: 10, Burst: 100})
	check("hotSwap", a.HotSwap, (*HotSwapConfig)(nil))
	check("hotSwap.s3.interval", time.Duration(pb.HotSwap.S3.Interval), 30*time.Second)
	check("hotSwap.s3.region", pb.HotSwap.S3.Region, "us-east-1")
	check("hotSwap.settle", time.Duration(c.HotSwap.Settle), 100*time.Millisecond)
	check("hotSwap.maxModuleBytes", c.HotSwap.MaxModuleBytes, int64(64<<20))
	check("hotSwap check interval (s3)", pb.HotSwap.CheckEvery(), 30*time.Second)
	check("hotSwap check interval (watch)", c.HotSwap.CheckEvery(), time.Duration(0))

	// Effective copies: the parsed configuration keeps its absent fields.
	check("parsed key", cfg.Projections[0].Key, []string(nil))
	check("parsed retry", cfg.Projections[0].Retry, RetryConfig{})
	check("parsed plugins.guestLog", cfg.Plugins.GuestLog, (*GuestLogConfig)(nil))

	// The stages still apply the same defaults on their own (until the host
	// passes them the effective values).
	check("plugin.DefaultPoolSize", plugin.DefaultPoolSize, DefaultPoolSize)
	check("plugin.DefaultMemoryLimitPages", plugin.DefaultMemoryLimitPages, DefaultMemoryLimitPages)
	check("plugin.DefaultCallTimeout", plugin.DefaultCallTimeout, DefaultCallTimeout)
	check("plugin.DefaultGuestLogRate", plugin.DefaultGuestLogRate, DefaultGuestLogRate)
	check("plugin.DefaultGuestLogBurst", plugin.DefaultGuestLogBurst, DefaultGuestLogBurst)
	check("swap.DefaultPollInterval", swap.DefaultPollInterval, DefaultS3Interval)
	check("swap.DefaultSettle", swap.DefaultSettle, DefaultSettle)
	check("swap.DefaultMaxModuleBytes", swap.DefaultMaxModuleBytes, DefaultMaxModuleBytes)
	eng, err := apply.New(apply.Projection{Name: "a", Table: "rows", KeyAttrs: DefaultKey, Sources: []apply.Source{{Stream: testlogic.Stream}},
		Logic: &testlogic.Ledger{}, Checkpoint: apply.Checkpoint{Field: "version"}, Revision: &apply.Revision{Field: "rev"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ap := eng.Projection()
	check("apply rows", ap.Rows, DefaultConcurrency)
	check("apply retry", ap.Retry, apply.Retry{Attempts: DefaultRetryAttempts, Base: DefaultRetryBase, Max: DefaultRetryMax})
	check("apply revision.initial", *ap.Revision.Initial, int64(DefaultRevisionInitial))
}

// TestH4_HotSwapConfigIsTheHostsOwn: "hotSwap" is read into host's own
// types, parsed once; Validate derives swap's form, with the defaults.
func TestH4_HotSwapConfigIsTheHostsOwn(t *testing.T) {
	m := validConfig()
	pin := strings.Repeat("ab", 32)
	projection0(m)["hotSwap"] = map[string]any{"s3": map[string]any{"bucket": "plugins", "key": "p.wasm", "interval": "1m30s", "endpoint": "http://127.0.0.1:9000"},
		"sha256": []any{pin}, "archive": "arch", "fixture": map[string]any{"events": "e.json", "rows": "r.json"}}
	b, _ := json.Marshal(m)
	cfg, err := ParseConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Projections[0]
	if p.HotSwap == nil || time.Duration(p.HotSwap.S3.Interval) != 90*time.Second || p.HotSwap.CheckEvery() != 90*time.Second {
		t.Fatalf("hotSwap = %+v", p.HotSwap)
	}
	want := &swap.SourceConfig{S3: &swap.S3Config{Bucket: "plugins", Key: "p.wasm", Interval: "1m30s", Endpoint: "http://127.0.0.1:9000", Region: "us-east-1"},
		SHA256: []string{pin}, Archive: "arch", Fixture: &swap.FixtureFiles{Events: "e.json", Rows: "r.json"}, MaxModuleBytes: DefaultMaxModuleBytes}
	sc := p.HotSwap.SourceConfig()
	if !reflect.DeepEqual(sc, want) {
		t.Errorf("swap form =\n%+v %+v, want\n%+v %+v", sc, sc.S3, want, want.S3)
	}
	if err := sc.Validate(); err != nil || sc.CheckEvery() != 90*time.Second {
		t.Errorf("swap form: Validate %v, CheckEvery %s", err, sc.CheckEvery())
	}
	if sc := (&HotSwapConfig{Watch: true}).SourceConfig(); sc.Settle != "100ms" || !sc.Enabled() {
		t.Errorf("watch: %+v", sc)
	}
}
