package gctune

import (
	"runtime/debug"
	"testing"
	"testing/fstest"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestY8_GCGivenRoomOnlyForAKnownBudgetAndNoOperatorSetting(t *testing.T) {
	s, ok := For(env(), 512<<20)
	if !ok || s.Percent != 400 || s.Limit != 384<<20 {
		t.Fatalf("512 MiB budget: %v %v, want GOGC=400 GOMEMLIMIT=384MiB", s, ok)
	}
	if s.String() != "GOGC=400 GOMEMLIMIT=384MiB" {
		t.Fatalf("String() = %q", s.String())
	}
	for name, c := range map[string]struct {
		getenv func(string) string
		budget int64
	}{
		"GOGC set":       {env("GOGC", "100"), 512 << 20},
		"GOGC off":       {env("GOGC", "off"), 512 << 20},
		"GOMEMLIMIT set": {env("GOMEMLIMIT", "1GiB"), 512 << 20},
		"no budget":      {env(), 0},
		"tiny budget":    {env(), 16 << 20},
	} {
		if s, ok := For(c.getenv, c.budget); ok {
			t.Errorf("%s: got %v, want the defaults left alone", name, s)
		}
	}
}

func TestY8_LambdaBudgetIsTheFunctionsMemory(t *testing.T) {
	for v, want := range map[string]int64{"128": 128 << 20, " 10240 ": 10240 << 20, "": 0, "x": 0, "-5": 0, "0": 0} {
		if got := LambdaBudget(env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", v)); got != want {
			t.Errorf("AWS_LAMBDA_FUNCTION_MEMORY_SIZE=%q: %d, want %d", v, got, want)
		}
	}
}

func TestY8_CgroupBudgetReadsV2ThenV1(t *testing.T) {
	v2 := "sys/fs/cgroup/memory.max"
	v1 := "sys/fs/cgroup/memory/memory.limit_in_bytes"
	for name, c := range map[string]struct {
		files map[string]string
		want  int64
	}{
		"v2 limit":    {map[string]string{v2: "536870912\n"}, 512 << 20},
		"v2 max":      {map[string]string{v2: "max\n", v1: "1048576"}, 0},
		"v1 limit":    {map[string]string{v1: "1073741824\n"}, 1 << 30},
		"v1 no limit": {map[string]string{v1: "9223372036854771712\n"}, 0},
		"none":        {map[string]string{}, 0},
	} {
		fsys := fstest.MapFS{}
		for p, d := range c.files {
			fsys[p] = &fstest.MapFile{Data: []byte(d)}
		}
		if got := CgroupBudget(fsys); got != c.want {
			t.Errorf("%s: %d, want %d", name, got, c.want)
		}
	}
}

func TestY8_ApplySetsTheProcesssCollector(t *testing.T) {
	oldPct := debug.SetGCPercent(100)
	oldLim := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(oldPct); debug.SetMemoryLimit(oldLim) })
	Apply(Settings{Percent: 400, Limit: 300 << 20})
	if got := debug.SetGCPercent(400); got != 400 {
		t.Errorf("GOGC %d, want 400", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Errorf("memory limit %d, want %d", got, 300<<20)
	}
}
