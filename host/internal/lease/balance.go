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

// ExpiresAt is when l expires if its counter does not move again; false
// when it is free already, or its counter moved since the last Observe.
func (t *Tracker) ExpiresAt(l Lease) (time.Time, bool) {
	if l.Owner == "" && l.StealBy == "" {
		return time.Time{}, false
	}
	s, ok := t.seen[l.Key]
	if !ok || s.counter != l.Counter {
		return time.Time{}, false
	}
	return s.at.Add(t.Duration), true
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
	Steal []Lease // leases to ask their owners for, for balance
}

// Balance decides which of the available leases worker me takes this
// round. Its fair share is ceil(available / workers), counting the
// workers that hold a live lease or asked for one that has not expired,
// and itself. It first
// takes the leases handed over to it (all of them, even past its share),
// then unowned and expired ones, up to its share. Still below it, it asks for leases (Plan.Steal), one at a
// time from whichever worker then holds the most, as long as that worker
// holds at least two more than it: each request narrows the gap, so the
// workers end within one lease of each other and no lease moves back and
// forth. Leases it already asked for count as its own, and as no longer
// their owner's, so a request in flight is never repeated. A lease handed
// over to another worker is left to it until it expires.
func Balance(available []Lease, me string, expired func(Lease) bool) Plan {
	held := map[string][]Lease{}
	workers := map[string]bool{me: true}
	var free []Lease
	asked := 0 // leases me asked for that their owners still hold
	for _, l := range available {
		if l.StealBy != "" && !expired(l) {
			// a request still in play: its worker counts; an expired
			// one may be a worker's that died after asking (a lease
			// handed over to it and never taken), which must not keep
			// the others below the share of the whole stream
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
		case l.Owner != me && l.StealBy == me:
			asked++
			workers[l.Owner] = true
		default:
			held[l.Owner] = append(held[l.Owner], l)
			workers[l.Owner] = true
		}
	}
	target := (len(available) + len(workers) - 1) / len(workers)
	mine := len(held[me]) + asked
	var p Plan
	sort.Slice(free, func(i, j int) bool {
		if a, b := free[i].StealBy == me, free[j].StealBy == me; a != b {
			return a // handed over to me first
		}
		// then in an order of this worker's own, so workers starting
		// together reach for different leases
		if a, b := spread(me, free[i].Key), spread(me, free[j].Key); a != b {
			return a < b
		}
		return free[i].Key < free[j].Key
	})
	for _, l := range free {
		// a lease handed over to me is taken even past the share: its
		// owner let it go, and left to me nobody else reads it until it
		// expires (another worker may then ask me for one)
		if mine >= target && !(l.Owner == "" && l.StealBy == me) {
			break
		}
		p.Take = append(p.Take, l)
		mine++
	}
	if len(free) > len(p.Take) {
		return p // nothing to ask for while free leases remain for others
	}
	// what each other worker keeps: its leases nobody asked for
	keeps := map[string][]Lease{}
	for w, ls := range held {
		if w == me {
			continue
		}
		for _, l := range ls {
			if l.StealBy == "" {
				keeps[w] = append(keeps[w], l)
			}
		}
		sort.Slice(keeps[w], func(i, j int) bool { return keeps[w][i].Key < keeps[w][j].Key })
	}
	count := func(w string) int { return len(held[w]) } // what it holds, asked for or not
	for mine < target {
		busiest, most := "", 0
		for w := range keeps {
			if n := count(w); len(keeps[w]) > 0 && (n > most || (n == most && w < busiest)) {
				busiest, most = w, n
			}
		}
		if busiest == "" || most-mine < 2 {
			break
		}
		ls := keeps[busiest]
		p.Steal = append(p.Steal, ls[len(ls)-1])
		keeps[busiest] = ls[:len(ls)-1]
		held[busiest] = held[busiest][:len(held[busiest])-1]
		mine++
	}
	return p
}

// spread orders keys differently for each worker (FNV-1a of both).
func spread(worker, key string) uint32 {
	h := uint32(2166136261)
	for _, s := range []string{worker, "\x00", key} {
		for i := 0; i < len(s); i++ {
			h = (h ^ uint32(s[i])) * 16777619
		}
	}
	return h
}
