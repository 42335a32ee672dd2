package telemetry

import (
	"slices"
	"time"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/quarantine"
)

type shardKey struct{ stream, shard string }

type shardState struct {
	behind   time.Duration
	lastRead time.Time
	records  int64
}

type leaseState struct {
	worker string
	held   []string
	total  int
	at     time.Time // when the round that reported it ended
}

// ShardRead implements sidecar.Observer: the records read and the shard's
// iterator age.
func (m *Metrics) ShardRead(stream, shard string, records int, behind time.Duration) {
	m.recordsRead.WithLabelValues(stream).Add(float64(records))
	m.totals.records.Add(int64(records))
	m.iteratorAge.WithLabelValues(stream, shard).Set(behind.Seconds())
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.shards[shardKey{stream, shard}]
	if st == nil {
		st = &shardState{}
		m.shards[shardKey{stream, shard}] = st
	}
	st.behind, st.lastRead = behind, m.now()
	st.records += int64(records)
}

// BatchProcessed implements sidecar.Observer: what the batch did, per
// projection. Callers that run Host.ProcessBatch themselves call it too.
func (m *Metrics) BatchProcessed(stream, shard string, res *host.Result, took time.Duration, err error) {
	m.batchDuration.WithLabelValues(stream).Observe(took.Seconds())
	if err != nil || res == nil {
		m.batches.WithLabelValues(stream, "error").Inc()
		return
	}
	m.batches.WithLabelValues(stream, "ok").Inc()
	m.recordsFailed.WithLabelValues(stream).Add(float64(len(res.Failed())))
	m.totals.failures.Add(int64(len(res.Failed())))
	decode := 0
	for _, f := range res.DecodeFailures {
		if !f.Skipped {
			decode++
		}
	}
	m.decodeFailed.WithLabelValues(stream).Add(float64(decode))
	m.observeFreshness(res)
	m.observeRateWait(res)
	for name := range res.Projections {
		c := res.Counts(name)
		m.applied.WithLabelValues(name).Add(float64(c.Applied))
		m.already.WithLabelValues(name).Add(float64(c.AlreadyApplied))
		m.rowsWritten.WithLabelValues(name).Add(float64(c.RowsWritten))
		m.rowsFailed.WithLabelValues(name).Add(float64(c.RowsFailed))
		m.retries.WithLabelValues(name).Add(float64(c.Retries))
		m.gapReads.WithLabelValues(name).Add(float64(c.GapReads))
		m.gapEvents.WithLabelValues(name).Add(float64(c.GapEvents))
		m.conflicts.WithLabelValues(name).Add(float64(c.Conflicts))
		m.newExisting.WithLabelValues(name).Add(float64(c.NewRowsExisting))
		rj, sk := rejectedSkipped(res.Projections[name])
		m.rejected.WithLabelValues(name).Add(float64(rj))
		m.skipped.WithLabelValues(name).Add(float64(sk))
		m.totals.add(c, rj, sk)
	}
}

// LeasesHeld implements sidecar.Observer: the leases this worker holds.
// The stream's shards it no longer holds (lease lost, handed over,
// released, shard finished) lose their per-shard series (lag, iterator
// age) and their row on the status page: a shard another worker reads
// would otherwise keep exporting a lag that climbs forever, and fire lag
// alerts on a healthy fleet.
func (m *Metrics) LeasesHeld(worker, stream string, held []string, total int) {
	m.leasesHeld.WithLabelValues(worker, stream).Set(float64(len(held)))
	m.shardsTotal.WithLabelValues(stream).Set(float64(total))
	m.mu.Lock()
	defer m.mu.Unlock()
	m.leases[stream] = leaseState{worker: worker, held: slices.Clone(held), total: total, at: time.Now()}
	for k := range m.shards {
		if k.stream == stream && !slices.Contains(held, k.shard) {
			delete(m.shards, k)
			m.iteratorAge.DeleteLabelValues(k.stream, k.shard)
		}
	}
}

// Failure is a record given up, as the status page lists it.
type Failure struct {
	Time       time.Time
	Projection string
	Stream     string
	Shard      string
	Identifier string // the record's sequence number (or event id)
	Reason     string
	// EntryID is the record's entry id in a quarantine table
	// (quarantine.EntryID); "" when the record has no identifier.
	EntryID string
	// Replayed is when the record's quarantine entry was first seen gone
	// (replayed with `host quarantine replay`); zero while it is kept, or
	// when it went elsewhere. See MarkReplayed.
	Replayed time.Time
}

// RecordGivenUp implements sidecar.Observer: it counts the record and keeps
// it among the recent failures.
func (m *Metrics) RecordGivenUp(projection, stream, shard string, rec host.Record, reason string) {
	m.givenUp.WithLabelValues(projection).Inc()
	m.totals.givenUp.Add(1)
	id := rec.DynamoDB.SequenceNumber
	if id == "" {
		id = rec.EventID
	}
	f := Failure{Time: m.now(), Projection: projection, Stream: stream, Shard: shard, Identifier: id, Reason: reason}
	if id != "" {
		f.EntryID = quarantine.EntryID(quarantine.Entry{Projection: projection, Stream: stream, Shard: shard, Record: rec})
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.recent) < m.keep {
		m.recent = append(m.recent, f)
		return
	}
	m.recent[m.next] = f
	m.next = (m.next + 1) % m.keep
}
