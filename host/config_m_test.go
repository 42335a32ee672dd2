package host

import (
	"strings"
	"testing"
)

// TestM5_RevisionWithoutACheckpointIsRefused: a revision alone keeps no
// checkpoint, so every redelivery would fold again from version 1.
func TestM5_RevisionWithoutACheckpointIsRefused(t *testing.T) {
	_, err := ParseConfig([]byte(strings.Replace(baseConfig, `"checkpoint": {"field": "version"} %s`, `"checkpoint": {}, "revision": {"field": "rev"}`, 1)))
	if err == nil {
		t.Fatal("a revision without a checkpoint field or map was accepted")
	}
	for _, w := range []string{`projection "summaries".checkpoint`, "checkpoint.field", "checkpoint.map"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q\ndoes not contain %q", err, w)
		}
	}
	// A map alone is a checkpoint.
	if _, err := ParseConfig([]byte(strings.Replace(baseConfig, `"checkpoint": {"field": "version"} %s`, `"checkpoint": {"map": "checkpoints"}, "revision": {"field": "rev"}`, 1))); err != nil {
		t.Errorf("checkpoint.map with revision: %v", err)
	}
}

// TestM5_RevisionInitialZeroIsKept: initial 0 is a value, not "absent".
func TestM5_RevisionInitialZeroIsKept(t *testing.T) {
	for _, tc := range []struct {
		initial string
		want    int64
	}{{`, "initial": 0`, 0}, {``, DefaultRevisionInitial}, {`, "initial": 7`, 7}} {
		cfg, err := ParseConfig([]byte(strings.Replace(baseConfig, "%s", `, "revision": {"field": "rev"`+tc.initial+`}`, 1)))
		if err != nil {
			t.Fatal(err)
		}
		r := cfg.Effective().Projections[0].Revision
		if r.Initial == nil || *r.Initial != tc.want {
			t.Errorf("revision%s: effective initial %v, want %d", tc.initial, r.Initial, tc.want)
		}
	}
}

// TestM3_CheckpointPlacesThatCannotWorkAreRefused: the map needs a
// revision; an instance field needs a field; a field beside a map needs an
// instance field; each attribute holds one thing.
func TestM3_CheckpointPlacesThatCannotWorkAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name, projection string
		want             []string
	}{
		{"map without revision", `"checkpoint": {"field": "version", "map": "cps", "instanceField": "owner"}`,
			[]string{`projection "summaries".checkpoint.map`, "revision"}},
		{"instance field without field", `"checkpoint": {"map": "cps", "instanceField": "owner"}, "revision": {"field": "rev"}`,
			[]string{`projection "summaries".checkpoint.instanceField`, "checkpoint.field"}},
		{"field and map without instance field", `"checkpoint": {"field": "version", "map": "cps"}, "revision": {"field": "rev"}`,
			[]string{`projection "summaries".checkpoint.instanceField`, "is required"}},
		{"map is the revision", `"checkpoint": {"map": "rev"}, "revision": {"field": "rev"}`,
			[]string{`projection "summaries".revision.field`, `"rev"`}},
		{"map is a key", `"checkpoint": {"map": "pk"}, "revision": {"field": "rev"}`,
			[]string{`projection "summaries".checkpoint.map`, "key attribute"}},
	} {
		_, err := ParseConfig([]byte(strings.Replace(baseConfig, `"checkpoint": {"field": "version"} %s`, tc.projection, 1)))
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q\ndoes not contain %q", tc.name, err, w)
			}
		}
	}
	if _, err := ParseConfig([]byte(strings.Replace(baseConfig, `"checkpoint": {"field": "version"} %s`,
		`"checkpoint": {"field": "version", "instanceField": "owner", "map": "cps"}, "revision": {"field": "rev", "initial": 0}`, 1))); err != nil {
		t.Errorf("field, instance field and map with revision: %v", err)
	}
}
