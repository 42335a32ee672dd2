package sidecar

import "context"

// checkpointer writes one shard's checkpoints in the background, one at a
// time: the checkpoint of a batch is written while the next batch is
// processed, so it costs no round trip of its own. A checkpoint is started
// only once its batch is processed, so it never passes a record that is
// not; it starts only after the one before it landed (start waits), so
// the lease never goes back. After a crash, the records after the last
// checkpoint that landed are delivered again: the batch in flight, and
// the one before it when the crash came during its checkpoint's write.
type checkpointer struct {
	r   *Reader
	h   *held
	ctx context.Context

	done   chan struct{} // the write in flight; nil when none
	seq    string        // its checkpoint
	err    error         // its result, once done
	failed string        // the checkpoint of the last write that failed ("" when it landed)
}

// start writes seq in the background, after the write in flight.
func (c *checkpointer) start(seq string) {
	c.wait()
	done := make(chan struct{})
	c.done, c.seq = done, seq
	go func() {
		defer close(done)
		c.err = c.r.checkpoint(c.ctx, c.h, seq)
	}()
}

// wait waits for the write in flight and returns its error (nil when none
// was in flight).
func (c *checkpointer) wait() error {
	if c.done == nil {
		return nil
	}
	<-c.done
	c.done = nil
	c.failed = ""
	if c.err != nil {
		c.failed = c.seq
	}
	return c.err
}

// retry writes the checkpoint of the last write that failed, if any, and
// waits for it.
func (c *checkpointer) retry() {
	if c.failed != "" {
		_ = c.r.checkpoint(c.ctx, c.h, c.failed)
	}
}
