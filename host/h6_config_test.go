package host_test

import (
	"strings"
	"testing"

	"github.com/dynafold/dynafold/host"
)

// Every mistake of a configuration file is listed at once, a range or type
// error among them (memoryLimitPages 100000 alone was reported for a file
// with three more mistakes), and each names its path one way: a
// projection by its name.
func TestH6_ConfigMistakesAreAllListedAtOnceAndSpeltOneWay(t *testing.T) {
	_, err := host.ParseConfig([]byte(`{
  "eventStore": {"table": "events", "schema": "shop", "streams": [{"name": "Stock", "composite": ["sku"]}]},
  "plugins": {"memoryLimitPages": 100000, "callTimeout": "-1s", "poolsize": 4},
  "projections": [{
    "name": "stock", "plugin": "stock.wasm", "table": 5,
    "key": ["pk", "sk", "extra"], "checkpoint": {"field": "version"},
    "concurrency": -3, "retry": {"attempts": "3", "base": "soon"}
  }]
}`))
	if err == nil {
		t.Fatal("a configuration with seven mistakes was accepted")
	}
	msg := err.Error()
	for _, want := range []string{
		"plugins.memoryLimitPages: 100000 is out of range: use a whole number from 0 to 65536 (line 3)",
		`plugins.callTimeout: -1s is negative`,
		`unknown field "poolsize" in plugins (line 3); did you mean "poolSize"?`,
		`projection "stock".table: want a string, got the number 5 (line 5)`,
		`projection "stock".key lists 3 attributes`,
		`projection "stock".concurrency: -3 is negative`,
		`projection "stock".retry.attempts: want a whole number, got the string "3" (line 7)`,
		`projection "stock".retry.base: "soon" is not a duration`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the mistakes lack %q:\n%s", want, msg)
		}
	}
	if n := strings.Count(msg, "\n") + 1; n != 8 {
		t.Errorf("%d lines, want one per mistake (8):\n%s", n, msg)
	}
	if strings.Contains(msg, "projections[0]") {
		t.Errorf("a projection is spelt two ways:\n%s", msg)
	}
	if strings.Contains(msg, "table is required") {
		t.Errorf("a value refused for its type is also reported missing:\n%s", msg)
	}

	// A misspelt key is one mistake: the field it meant is not reported
	// missing beside it.
	_, err = host.ParseConfig([]byte(`{
  "eventStore": {"table": "events", "schema": "shop", "streams": [{"name": "Stock", "composite": ["sku"]}]},
  "projections": [{"name": "stock", "plugin": "stock.wasm", "table": "stock", "checkPoint": {"field": "version"}}]
}`))
	if err == nil {
		t.Fatal("a misspelt key was accepted")
	}
	if want := `unknown field "checkPoint" in projection "stock" (line 3); did you mean "checkpoint"?`; !strings.Contains(err.Error(), want) {
		t.Errorf("%v lacks %q", err, want)
	}
	if strings.Contains(err.Error(), "checkpoint.field is required") || strings.Count(err.Error(), "\n") != 0 {
		t.Errorf("one mistake, reported twice:\n%v", err)
	}
}

// Two attributes the host writes named alike: the mistake is that one
// attribute cannot hold both, not that a key changes (neither is a key).
// A key attribute named for one says the key cannot change.
func TestH6_TwoHostAttributesOnOneNameSayWhyNotAKeysReason(t *testing.T) {
	_, err := host.ParseConfig([]byte(`{
  "eventStore": {"table": "events", "schema": "bank", "streams": [{"name": "Account", "composite": ["accountId"]}]},
  "projections": [{"name": "bank", "plugin": "bank.wasm", "table": "bank", "checkpoint": {"map": "rev"}, "revision": {"field": "rev"}}]
}`))
	if err == nil {
		t.Fatal("one attribute for the checkpoint map and the revision was accepted")
	}
	if !strings.Contains(err.Error(), `"rev" is also the checkpoint.map attribute: each attribute the host writes holds one thing`) || strings.Contains(err.Error(), "key cannot change") {
		t.Errorf("error: %v", err)
	}
	_, err = host.ParseConfig([]byte(`{
  "eventStore": {"table": "events", "schema": "bank", "streams": [{"name": "Account", "composite": ["accountId"]}]},
  "projections": [{"name": "bank", "plugin": "bank.wasm", "table": "bank", "checkpoint": {"map": "cps"}, "revision": {"field": "sk"}}]
}`))
	if err == nil || !strings.Contains(err.Error(), `"sk" is also a key attribute: the host rewrites it with every write, and a row's key cannot change`) {
		t.Errorf("a key attribute for the revision: %v", err)
	}
}
