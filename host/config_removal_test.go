package host

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Removal settings that cannot be made safe are refused at load, naming the
// JSON path and what to set.
func TestT4_RemovalConfigMistakesRefused(t *testing.T) {
	const p = `projection "summaries".`
	tests := []struct {
		name   string
		change func(m map[string]any)
		want   []string
	}{
		{"ttl within the change feed's retention", func(m map[string]any) {
			projection0(m)["removal"] = map[string]any{"ttl": "12h"}
		}, []string{p + "removal.ttl", "12h0m0s", "too short", "recreate", "720h"}},
		{"negative ttl", func(m map[string]any) { projection0(m)["removal"] = map[string]any{"ttl": "-48h"} },
			[]string{p + "removal.ttl", "negative"}},
		{"ttl not a duration", func(m map[string]any) { projection0(m)["removal"] = map[string]any{"ttl": "30 days"} },
			[]string{`projection "summaries".removal.ttl`, `"30 days"`}},
		{"ttl attribute without ttl", func(m map[string]any) {
			projection0(m)["removal"] = map[string]any{"ttlAttribute": "expiresAt"}
		}, []string{p + "removal.ttlAttribute", "removal.ttl"}},
		{"ttl attribute is the checkpoint", func(m map[string]any) {
			projection0(m)["removal"] = map[string]any{"ttl": "720h", "ttlAttribute": "version"}
		}, []string{p + "removal.ttlAttribute", `"version"`, "checkpoint.field"}},
		{"default ttl attribute is the checkpoint", func(m map[string]any) {
			projection0(m)["checkpoint"] = map[string]any{"field": "ttl"}
			projection0(m)["removal"] = map[string]any{"ttl": "720h"}
		}, []string{p + "removal.ttlAttribute", `"ttl"`}},
		{"checkpoint is the marker", func(m map[string]any) {
			projection0(m)["checkpoint"] = map[string]any{"field": "__edd_e__"}
			projection0(m)["removal"] = map[string]any{}
		}, []string{p + "checkpoint.field", `"__edd_e__"`, "tombstone marker"}},
		{"key is the marker", func(m map[string]any) {
			projection0(m)["key"] = []any{"__edd_e__"}
			projection0(m)["removal"] = map[string]any{}
		}, []string{p + "removal", `"__edd_e__"`, "key attribute"}},
		{"removal without a checkpoint", func(m map[string]any) {
			projection0(m)["checkpoint"] = map[string]any{}
			projection0(m)["revision"] = map[string]any{"field": "rev"}
			projection0(m)["removal"] = map[string]any{}
		}, []string{p + "checkpoint", "checkpoint.map", "checkpoint.field"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := validConfig()
			tt.change(m)
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseConfig(b)
			if err == nil {
				t.Fatalf("accepted: %s", b)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "SPEC") || strings.Contains(err.Error(), "T4") {
				t.Errorf("error %q names an internal SPEC item", err)
			}
		})
	}
}

// removal {} and removal.ttl get their documented defaults: the entity type
// is the projection's name, the TTL attribute DefaultTTLAttribute.
func TestT4_RemovalDefaults(t *testing.T) {
	m := validConfig()
	projection0(m)["removal"] = map[string]any{"ttl": "720h"}
	b, _ := json.Marshal(m)
	cfg, err := ParseConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Effective().Projections[0]
	if e.ReadModel.EntityType != "summaries" {
		t.Errorf("readModel.entityType = %q, want the projection's name", e.ReadModel.EntityType)
	}
	if e.Removal.TTLAttribute != DefaultTTLAttribute || time.Duration(e.Removal.TTL) != 720*time.Hour {
		t.Errorf("removal = %+v, want ttl 720h on %q", *e.Removal, DefaultTTLAttribute)
	}
	if cfg.Projections[0].Removal.TTLAttribute != "" {
		t.Errorf("Effective modified the parsed removal: %+v", *cfg.Projections[0].Removal)
	}
}
