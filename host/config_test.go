package host

import (
	"strings"
	"testing"
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
