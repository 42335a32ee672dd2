package lease

import (
	"sort"
	"time"
)

// Tracker remembers when each lease's counter last moved, by the local
// clock: a lease whose counter stayed still for the lease duration is
// expired. A worker that starts sees every lease as just moved, so it
// waits a full duration before taking a lease another worker may still
// hold.
type Tracker struct {
	Duration time.Duration
	seen     map[string]seen
}

type seen struct {
	counter int64
	at      time.Time
}

// Observe records the leases read at now.
func (t *Tracker) Observe(leases []Lease, now time.Time) {
	if t.seen == nil {
		t.seen = map[string]seen{}
	}
	for _, l := range leases {
		if s, ok := t.seen[l.Key]; !ok || s.counter != l.Counter {
			t.seen[l.Key] = seen{l.Counter, now}
		}
	}
}

// Expired reports whether l is free to take: unowned and asked for by
// nobody, or its counter has not moved for Duration.
func (t *Tracker) Expired(l Lease, now time.Time) bool {
	if l.Owner == "" && l.StealBy == "" {
		return true
	}
	s, ok := t.seen[l.Key]
	return ok && s.counter == l.Counter && now.Sub(s.at) >= t.Duration
}

// Available returns the leases that may be read now: not finished, and every
// parent finished or gone (no lease for it and not in listed, the shards
// the stream still lists). This is what keeps parents before children
// across processes: a child's lease is taken only once every parent's
// checkpoint is ShardEnd.
func Available(leases []Lease, listed map[string]bool) []Lease {
	byKey := make(map[string]Lease, len(leases))
	for _, l := range leases {
		byKey[l.Key] = l
	}
	var out []Lease
	for _, l := range leases {
		if l.Finished() {
			continue
		}
		ok := true
		for _, p := range l.Parents {
			pl, has := byKey[p]
			if (has && !pl.Finished()) || (!has && listed[p]) {
				ok = false
			}
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
}

// Plan is what one lease round takes.
type Plan struct {
	Take  []Lease // unowned or expired leases to take
	Steal *Lease  // at most one lease to take from the busiest worker
}

// Balance decides which of the available leases worker me takes this
// round: its fair share is ceil(available / workers), counting the workers
// that hold a live lease or asked for one, and itself. It first takes the
// leases handed over to it, then unowned and expired ones, up to its share;
// when none is free and it is still below its share by more than one, it
// asks the worker holding the most for one lease (Plan.Steal), if that
// worker holds more than the share. A lease handed over to another worker
// is left to it until it expires.
func Balance(available []Lease, me string, expired func(Lease) bool) Plan {
	held := map[string][]Lease{}
	workers := map[string]bool{me: true}
	var free []Lease
	for _, l := range available {
		if l.StealBy != "" {
			workers[l.StealBy] = true
		}
		switch {
		case l.Owner == "" && (l.StealBy == "" || l.StealBy == me):
			free = append(free, l)
		case l.Owner == "": // handed over to another worker
			if expired(l) {
				free = append(free, l)
			}
		case l.Owner != me && expired(l):
			free = append(free, l)
		default:
			held[l.Owner] = append(held[l.Owner], l)
			workers[l.Owner] = true
		}
	}
	target := (len(available) + len(workers) - 1) / len(workers)
	mine := len(held[me])
	var p Plan
	sort.Slice(free, func(i, j int) bool {
		if a, b := free[i].StealBy == me, free[j].StealBy == me; a != b {
			return a // handed over to me first
		}
		return free[i].Key < free[j].Key
	})
	for _, l := range free {
		if mine >= target {
			break
		}
		p.Take = append(p.Take, l)
		mine++
	}
	if len(p.Take) > 0 || mine >= target {
		return p
	}
	busiest, most := "", 0
	for w, ls := range held {
		if w != me && (len(ls) > most || (len(ls) == most && w < busiest)) {
			busiest, most = w, len(ls)
		}
	}
	if busiest != "" && most > target && most-mine > 1 {
		ls := held[busiest]
		sort.Slice(ls, func(i, j int) bool { return ls[i].Key < ls[j].Key })
		l := ls[len(ls)-1]
		p.Steal = &l
	}
	return p
}
