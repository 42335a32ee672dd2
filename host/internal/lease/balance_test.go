package lease

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func keys(ls []Lease) (out []string) {
	for _, l := range ls {
		out = append(out, l.Key)
	}
	return out
}

func TestC3_AvailableKeepsAChildUntilEveryParentIsFinished(t *testing.T) {
	ls := []Lease{
		{Key: "a", Checkpoint: ShardEnd},
		{Key: "b", Parents: []string{"a"}, Checkpoint: "17"},
		{Key: "c", Parents: []string{"b"}, Checkpoint: TrimHorizon},
		{Key: "d", Parents: []string{"gone"}},   // parent trimmed away and no lease: nothing to wait for
		{Key: "e", Parents: []string{"listed"}}, // parent still listed but its lease not yet created: wait
		{Key: "f", Parents: []string{"a", "b"}}, // merged: waits for both
	}
	assert.Equal(t, []string{"b", "d"}, keys(Available(ls, map[string]bool{"listed": true})))
	ls[1].Checkpoint = ShardEnd
	assert.Equal(t, []string{"c", "d", "f"}, keys(Available(ls, map[string]bool{"listed": true})))
}

func TestC3_ExpiryIsJudgedByTheLocalClockFromTheLastCounterChange(t *testing.T) {
	tr := &Tracker{Duration: time.Second}
	t0 := time.Unix(1000, 0)
	l := Lease{Key: "a", Owner: "w1", Counter: 5}
	tr.Observe([]Lease{l}, t0)
	assert.False(t, tr.Expired(l, t0.Add(999*time.Millisecond)), "a worker that just started waits a whole duration")
	assert.True(t, tr.Expired(l, t0.Add(time.Second)))
	l.Counter = 6 // renewed
	tr.Observe([]Lease{l}, t0.Add(900*time.Millisecond))
	assert.False(t, tr.Expired(l, t0.Add(1500*time.Millisecond)))
	assert.True(t, tr.Expired(Lease{Key: "x"}, t0), "an unowned lease is free at once")
}

func TestC5_BalanceTakesItsShareThenAsksTheBusiestWhileItHoldsTwoMore(t *testing.T) {
	never := func(Lease) bool { return false }
	own := func(owner string, ks ...string) (out []Lease) {
		for _, k := range ks {
			out = append(out, Lease{Key: k, Owner: owner})
		}
		return out
	}
	// a new worker among one holding 6: its share is 3; nothing is free,
	// so it asks for three leases, the busiest worker's last
	p := Balance(own("w1", "a", "b", "c", "d", "e", "f"), "me", never)
	assert.Empty(t, p.Take)
	assert.Equal(t, []string{"f", "e", "d"}, keys(p.Steal))
	for _, s := range p.Steal {
		assert.Equal(t, "w1", s.Owner)
	}
	// the leases it asked for count as its own while their owner still
	// holds them: asked again, it asks for nothing more
	ls0 := own("w1", "a", "b", "c", "d", "e", "f")
	for i := 3; i < 6; i++ {
		ls0[i].StealBy = "me"
	}
	p = Balance(ls0, "me", never)
	assert.Empty(t, p.Take)
	assert.Empty(t, p.Steal)
	// free and expired leases first, up to the share (ceil(5/2) = 3)
	ls := append(own("w1", "a", "b"), own("", "c", "d")...)
	ls = append(ls, Lease{Key: "e", Owner: "dead"})
	p = Balance(ls, "me", func(l Lease) bool { return l.Owner == "dead" })
	assert.ElementsMatch(t, []string{"c", "d", "e"}, keys(p.Take))
	assert.Empty(t, p.Steal)
	// balanced within one: nothing to do
	p = Balance(append(own("w1", "a", "b"), own("me", "c")...), "me", never)
	assert.Empty(t, p.Take)
	assert.Empty(t, p.Steal)
	// at its share already: takes no more even when some are free
	p = Balance(append(append(own("me", "a", "b"), own("w1", "x")...), own("", "c")...), "me", never)
	assert.Empty(t, p.Take)

	// a lease handed over to another worker is left to it until it expires
	handed := Lease{Key: "h", StealBy: "w2"}
	p = Balance([]Lease{handed}, "me", never)
	assert.Empty(t, p.Take)
	p = Balance([]Lease{handed}, "w2", never)
	assert.Equal(t, []string{"h"}, keys(p.Take))
	p = Balance([]Lease{handed}, "me", func(Lease) bool { return true })
	assert.Equal(t, []string{"h"}, keys(p.Take), "expired: anyone's")
}

// A worker that asked for a lease and died before taking it: the lease
// was handed over to it, its own leases expire, and nobody renews either.
// The survivor's share is then the whole stream's, not half of it.
func TestK2_AWorkerThatDiedAfterAskingForALeaseIsNotCountedInTheShare(t *testing.T) {
	ls := []Lease{
		{Key: "s0", Owner: "b"},
		{Key: "s1", Owner: "b"},
		{Key: "s2", Owner: "a"},              // a's, expired
		{Key: "s3", Owner: "", StealBy: "a"}, // handed over to a, never taken, expired
	}
	dead := func(l Lease) bool { return l.Owner == "a" || l.StealBy == "a" }
	p := Balance(ls, "b", dead)
	assert.ElementsMatch(t, []string{"s2", "s3"}, keys(p.Take), "the survivor takes the dead worker's leases")
	// while the handed-over lease has not expired, its worker still counts
	p = Balance(ls, "b", func(l Lease) bool { return l.Owner == "a" })
	assert.Empty(t, p.Take, "b is at its share of two while a may still take s3")
}
