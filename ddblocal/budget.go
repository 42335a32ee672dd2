package ddblocal

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// Request memory: every request is charged, before its body is read, the
// most memory reading and decoding a body of its length can take, and
// holds the charge until its response is written. A request that does not
// fit waits; one that waits longer than Options.RequestMemoryWait is
// refused with a ThrottlingException.
const (
	// decodeBytesPerByte bounds what decoding attribute values allocates
	// per byte of body (the body itself included): the worst shapes,
	// lists and maps of empty values, build a 128-byte abi.Value (and a
	// map slot) for every 8 to 12 bytes of JSON. FuzzDecodeRequest checks
	// the bound (see also plainMemberBytes).
	decodeBytesPerByte = 24
	// decodeBytesFixed is the charge of an empty request.
	decodeBytesFixed = 16 << 10

	defaultRequestMemory     = 512 << 20
	defaultRequestMemoryWait = 10 * time.Second
)

// errRequestMemory is the wait for request memory running out.
var errRequestMemory = errors.New("ddblocal: request memory busy")

// memBudget is a weighted semaphore over bytes of request memory. A
// request whose charge is at most the reserve (an eighth of the limit) is
// small: small requests pass whenever they fit, so large ones waiting
// never hold them up; large ones leave the reserve free and are admitted
// in arrival order. A charge is at most the limit minus the reserve, so
// every request eventually fits.
type memBudget struct {
	mu      sync.Mutex
	limit   int64 // <= 0: no limit
	reserve int64
	used    int64
	queue   []*memWaiter
}

type memWaiter struct {
	n       int64
	ready   chan struct{}
	granted bool
}

// requestMemory is Options.RequestMemory with its default (0: the
// default, negative: no limit).
func requestMemory(n int64) int64 {
	switch {
	case n == 0:
		return defaultRequestMemory
	case n < 0:
		return 0
	}
	return n
}

func newMemBudget(limit int64) *memBudget {
	return &memBudget{limit: limit, reserve: limit / 8}
}

// decodeCost is the most reading and decoding a body of n bytes can
// allocate: its attribute values (decodeBytesPerByte a byte) and up to
// maxPlainMembers list elements and map members outside them, each at
// least 2 bytes of JSON.
func decodeCost(n int64) int64 {
	return n*decodeBytesPerByte + min(n/2, maxPlainMembers)*plainMemberBytes + decodeBytesFixed
}

// cost is the charge of a request whose body is n bytes (n < 0: unknown,
// so the largest allowed).
func (b *memBudget) cost(n int64) int64 {
	if n < 0 || n > maxBody {
		n = maxBody
	}
	c := decodeCost(n)
	if b.limit > 0 && c > b.limit-b.reserve {
		c = b.limit - b.reserve
	}
	return c
}

func (b *memBudget) small(n int64) bool { return n <= b.reserve }

// fits reports whether n bytes can be granted now; b.mu is held.
func (b *memBudget) fits(n int64) bool {
	room := b.limit - b.used
	if !b.small(n) {
		room -= b.reserve
	}
	return n <= room
}

// acquire takes n bytes, waiting up to wait (or until ctx ends) for them.
func (b *memBudget) acquire(ctx context.Context, n int64, wait time.Duration) error {
	if b.limit <= 0 {
		return nil
	}
	b.mu.Lock()
	if b.fits(n) && (b.small(n) || !b.largeWaiting()) {
		b.used += n
		b.mu.Unlock()
		return nil
	}
	w := &memWaiter{n: n, ready: make(chan struct{})}
	b.queue = append(b.queue, w)
	b.mu.Unlock()

	t := time.NewTimer(wait)
	defer t.Stop()
	var err error
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-t.C:
		err = errRequestMemory
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if w.granted { // granted while giving up
		if err == errRequestMemory {
			return nil
		}
		b.used -= n
	} else {
		for i, q := range b.queue {
			if q == w {
				b.queue = append(b.queue[:i], b.queue[i+1:]...)
				break
			}
		}
	}
	b.grant()
	return err
}

// release gives back n bytes.
func (b *memBudget) release(n int64) {
	if b.limit <= 0 || n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.grant()
	b.mu.Unlock()
}

// grant admits the waiters that fit: small ones wherever they are in the
// queue, large ones in order. b.mu is held.
func (b *memBudget) grant() {
	largeBlocked := false
	keep := b.queue[:0]
	for _, w := range b.queue {
		small := b.small(w.n)
		if (small || !largeBlocked) && b.fits(w.n) {
			b.used += w.n
			w.granted = true
			close(w.ready)
			continue
		}
		if !small {
			largeBlocked = true
		}
		keep = append(keep, w)
	}
	clear(b.queue[len(keep):])
	b.queue = keep
}

func (b *memBudget) largeWaiting() bool {
	for _, w := range b.queue {
		if !b.small(w.n) {
			return true
		}
	}
	return false
}

// state returns the bytes granted and the number of requests waiting.
func (b *memBudget) state() (used int64, waiting int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, len(b.queue)
}

// busyError is the ThrottlingException of a request that waited too long
// for request memory.
func (b *memBudget) busyError(n int64) error {
	used, waiting := b.state()
	return apierr.New("ThrottlingException", 400,
		"Rate of requests exceeds the allowed throughput. (ddblocal: this request needs %d MiB of request memory; %d MiB of %d MiB are taken by requests being decoded or served and %d more wait; retry it, or raise Options.RequestMemory / --request-memory)",
		mibCeil(n), mibCeil(used), mibCeil(b.limit), waiting)
}

func mibCeil(n int64) int64 { return (n + 1<<20 - 1) >> 20 }

// errClientGone is returned by work that stopped because the client went
// away; nothing is answered to it.
var errClientGone = errors.New("ddblocal: the client went away")

// clientGone returns errClientGone (wrapping ctx's error) once ctx ends.
func clientGone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", errClientGone, err)
	}
	return nil
}
