package sidecar

import (
	"errors"
	"strconv"

	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin"
)

// maxStuck bounds the causes a shard's reader remembers (a reader that
// gave up more events than this forgets them all and learns again).
const maxStuck = 10000

// eventCause is the identity of a deterministic failure, one of three:
//   - the plugin's evolve failed an event (terminal did not accept it):
//     the projection, the event and the domain error's tag;
//   - the plugin's call failed on its own (a trap, its timeout or loop
//     budget, an out-of-memory, an answer the protocol does not allow):
//     the projection, the plugin version, the events the call started
//     from (right after the row's checkpoints) and the kind of failure;
//   - the row's item, as the plugin made it, is over DynamoDB's 400 KB
//     limit: the projection, the plugin version and the row. A row that
//     grew past it stays there for every later event folded on it by the
//     same version.
//
// The same fold fails the same way, so every later record of that row
// fails with it until the plugin or the event changes. ok is false for any
// other failure (a write, a key, a decode, a plugin closed or a call
// canceled), which a retry may get past.
func eventCause(projection string, err error) (string, bool) {
	var ee *apply.EventError
	if errors.As(err, &ee) && ee.Err != nil {
		ev := ee.Event
		return projection + "\x00" + ev.Stream + "\x00" + ev.StreamID + "\x00" + strconv.FormatUint(ev.Version, 10) + "\x00" + ee.Err.Tag, true
	}
	var oe *logic.OutputError
	if errors.Is(err, apply.ErrItemTooLarge) && errors.As(err, &oe) {
		row := oe.Stream + "\x00" + oe.StreamID
		var re *apply.RowError
		if errors.As(err, &re) {
			row = re.Key
		}
		return projection + "\x00too large\x00" + oe.Plugin + "\x00" + row, true
	}
	var ce *apply.CallError
	if !errors.As(err, &ce) || len(ce.Starts) == 0 {
		return "", false
	}
	kind := ""
	for _, k := range []error{plugin.ErrTrap, plugin.ErrTimeout, plugin.ErrLoopBudget, plugin.ErrMemoryLimit, plugin.ErrBadOutput} {
		if errors.Is(err, k) {
			kind = k.Error()
			break
		}
	}
	if kind == "" {
		return "", false
	}
	c := projection + "\x00call\x00" + ce.Plugin + "\x00" + kind
	for _, ev := range ce.Starts {
		c += "\x00" + ev.Stream + "\x00" + ev.StreamID + "\x00" + strconv.FormatUint(ev.Version, 10)
	}
	return c, true
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
