package swap

import (
	"path/filepath"
	"testing"

	"github.com/dynafold/dynafold/internal/wasmbuild"
)

func TestH3_ExportSectionNamesSelfTest(t *testing.T) {
	v1 := wasmbuild.Build(t, filepath.Join("..", "..", "plugins", "examples", "order-summary", "wasm"))
	v2 := wasmbuild.Build(t, filepath.Join("testdata", "v2"))
	for _, c := range []struct {
		wasm []byte
		name string
		want bool
	}{{v1, "self_test", false}, {v2, "self_test", true}, {v1, "evolve", true}, {v1, "memory", false}} {
		got, err := exportsFunction(c.wasm, c.name)
		if err != nil || got != c.want {
			t.Errorf("exportsFunction(%s): %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	if _, err := exportsFunction([]byte("nope"), "x"); err == nil {
		t.Error("garbage parsed")
	}
	if _, err := exportsFunction(v1[:20], "self_test"); err == nil {
		t.Error("a truncated module parsed")
	}
}
