package apply

import (
	"fmt"
	"slices"
	"testing"

	"github.com/dynafold/dynafold/abi"
)

// TestY8_RowInstancesKeepEachInstancesInputs: a row's instances keep, in
// the order they came, each instance's inputs in order, below and past the
// count where an index takes over, whatever room the first input hinted;
// set replaces an instance's inputs, of is nil for an unknown instance.
func TestY8_RowInstancesKeepEachInstancesInputs(t *testing.T) {
	for _, n := range []int{1, 2, indexAt, indexAt + 1, 3 * indexAt} {
		for _, room := range []int{1, 3} {
			t.Run(fmt.Sprintf("instances=%d/room=%d", n, room), func(t *testing.T) {
				var s rowInstances
				id := func(i int) instanceID { return instanceID{"src", fmt.Sprint("s", i)} }
				// three rounds over the instances: each gets versions 1, 2, 3
				for v := uint64(1); v <= 3; v++ {
					for i := range n {
						s.add(id(i), Input{Event: abi.Event{StreamID: id(i).streamID, Version: v}, Pos: i}, func() int { return room })
					}
				}
				if len(s.list) != n {
					t.Fatalf("%d instances, want %d", len(s.list), n)
				}
				for i := range n {
					if s.list[i].id != id(i) {
						t.Fatalf("instance %d is %v, want %v", i, s.list[i].id, id(i))
					}
					var vs []uint64
					for _, in := range s.of(id(i)) {
						vs = append(vs, in.Event.Version)
					}
					if !slices.Equal(vs, []uint64{1, 2, 3}) {
						t.Fatalf("instance %d has versions %v, want 1 2 3", i, vs)
					}
				}
				s.set(id(0), nil)
				s.set(id(n), []Input{{Pos: 7}})
				if s.of(id(0)) != nil || len(s.of(id(n))) != 1 || s.of(id(n))[0].Pos != 7 || s.of(id(n+1)) != nil {
					t.Fatalf("after set: %v, %v, %v", s.of(id(0)), s.of(id(n)), s.of(id(n+1)))
				}
				s.reset()
				if len(s.list) != 0 || s.of(id(1)) != nil {
					t.Fatal("reset left instances")
				}
			})
		}
	}
}

// TestY8_PresenceHasTheMarkedVersions: once sealed, an instance's versions
// are the marked ones, whatever their order and repeats; an instance
// never marked has none.
func TestY8_PresenceHasTheMarkedVersions(t *testing.T) {
	p := presence{}
	a, b := instanceID{"s", "a"}, instanceID{"s", "b"}
	for _, v := range []uint64{5, 3, 9, 3, 1} {
		p.mark(a, v)
	}
	p.mark(b, 2)
	p.sealAll()
	for v := uint64(0); v <= 10; v++ {
		want := v == 1 || v == 3 || v == 5 || v == 9
		if got := p[a].has(v); got != want {
			t.Errorf("a has %d: %v, want %v", v, got, want)
		}
	}
	if !slices.Equal(p[a], versions{1, 3, 5, 9}) || !p[b].has(2) || p[b].has(1) {
		t.Errorf("sealed: a %v, b %v", p[a], p[b])
	}
	if p[instanceID{"s", "c"}].has(1) {
		t.Error("an instance never marked has a version")
	}
}
