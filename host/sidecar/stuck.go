package sidecar

import (
	"errors"
	"strconv"

	"github.com/dynafold/dynafold/host/internal/apply"
)

// maxStuck bounds the causes a shard's reader remembers (a reader that
// gave up more events than this forgets them all and learns again).
const maxStuck = 10000

// eventCause is the identity of a deterministic failure: the projection,
// the event its plugin's evolve failed on (terminal did not accept it),
// and the domain error's tag. The same event folded into the same row
// fails the same way, so every later record of that row fails with it
// until the plugin or the event changes. ok is false for any other
// failure (a write, the plugin's call, a key, a decode), which a retry
// may get past.
func eventCause(projection string, err error) (string, bool) {
	var ee *apply.EventError
	if !errors.As(err, &ee) || ee.Err == nil {
		return "", false
	}
	ev := ee.Event
	return projection + "\x00" + ev.Stream + "\x00" + ev.StreamID + "\x00" + strconv.FormatUint(ev.Version, 10) + "\x00" + ee.Err.Tag, true
}

// givenUpBefore reports whether every cause of f is an event failure this
// shard's reader has already given a record up for: the record fails
// behind that event, as every later record of its row will, and retrying
// it only holds the shard.
func (ds *deliveries) givenUpBefore(f failure) bool {
	if len(f.causes) == 0 {
		return false
	}
	for _, c := range f.causes {
		if !ds.stuck[c] {
			return false
		}
	}
	return true
}

// remember notes f's event failures after its record was given up.
func (ds *deliveries) remember(f failure) {
	if len(ds.stuck)+len(f.causes) > maxStuck {
		clear(ds.stuck)
	}
	for _, c := range f.causes {
		ds.stuck[c] = true
	}
}
