package host_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// packedHosts runs the ledger over an event table whose appends pack data
// as comp says; readOpts are the options of a second host reading the same
// tables without packing (nil: the writer reads). It returns the event table.
func packedHosts(t *testing.T, comp *host.CompressionConfig, writeOpts, readOpts []host.Option) (w, r *host.Host, env *testenv.Env, events string) {
	t.Helper()
	env = testenv.Start(t)
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: env.Table(t, "events", true), Schema: "test", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: testlogic.Stream, Composite: []string{"acctId"}}}, Compression: comp},
		Projections: []host.ProjectionConfig{{Name: "ledger", Plugin: "native:ledger", Table: env.Table(t, "ledger", false),
			Checkpoint: host.CheckpointConfig{Field: "cp"}}},
	}
	mk := func(opts []host.Option) *host.Host {
		base := []host.Option{host.WithNative("ledger", &testlogic.Ledger{}), host.WithClient(env.Client),
			host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
		h, err := host.New(context.Background(), cfg, append(base, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close(context.Background()) })
		return h
	}
	w = mk(writeOpts)
	r = w
	if readOpts != nil {
		rc := *cfg
		rc.EventStore.Compression = nil
		cfg = &rc
		r = mk(readOpts)
	}
	return w, r, env, cfg.EventStore.Table
}

func insertRecord(h *host.Host, ev abi.Event, seq int) host.Record {
	return host.Record{EventName: "INSERT", EventID: fmt.Sprint(seq),
		DynamoDB: host.StreamRecord{NewImage: h.EventItem(ev), SequenceNumber: fmt.Sprint(seq)}}
}

// TestES6_PackedEventDataDecodesInProcessBatchAndGapFill: appends pack
// data above the threshold (B data + dataCodec), small data stays a map;
// a packed event decodes from the change feed and from the gap-fill read.
func TestES6_PackedEventDataDecodesInProcessBatchAndGapFill(t *testing.T) {
	ctx := context.Background()
	h, _, env, events := packedHosts(t, &host.CompressionConfig{Codec: host.CodecGzip, MinBytes: 60}, nil, nil)
	pad := strings.Repeat("x", 200)
	evs, err := h.Append(ctx, testlogic.Stream, "a1", 0,
		host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N("2"), "pad": abi.S(pad)}},
		host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N("3")}},
		host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N("5"), "pad": abi.S(pad)}})
	if err != nil {
		t.Fatal(err)
	}
	// What DynamoDB holds: the first and last packed, the second not.
	for i, want := range []bool{true, false, true} {
		it := h.EventItem(evs[i])
		stored := env.Get(t, events, abi.Item{"pk": it["pk"], "sk": it["sk"]})
		packed := stored["data"].Kind == abi.KindB
		if packed != want || (packed && stored["dataCodec"].Str != "gzip") {
			t.Errorf("v%d stored data %s codec %q, want packed=%v", i+1, stored["data"].Kind, stored["dataCodec"].Str, want)
		}
		if packed && len(stored["data"].Bytes) >= len(pad) {
			t.Errorf("v%d packed to %d bytes, not smaller than its %d-byte pad", i+1, len(stored["data"].Bytes), len(pad))
		}
	}
	// The batch delivers only v3 (packed): v1 (packed) and v2 come from the gap-fill read.
	res, err := h.ProcessBatch(ctx, []host.Record{insertRecord(h, evs[2], 7)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.DecodeFailures) != 0 || len(res.Events) != 1 || res.Events[0].Data["pad"].Str != pad {
		t.Fatalf("decode: failures %v, events %+v", res.DecodeFailures, res.Events)
	}
	rows := res.Projections["ledger"].Rows
	if len(rows) != 1 || rows[0].Err != nil {
		t.Fatalf("rows %+v", rows)
	}
	if got := versionsOf(rows[0].Instances[0].Applied); fmt.Sprint(got) != "[1 2 3]" {
		t.Errorf("applied %v, want [1 2 3] (1 and 2 gap-filled)", got)
	}
	if rows[0].Instances[0].Applied[0].Data["pad"].Str != pad {
		t.Errorf("gap-filled v1 data %v: not unpacked", rows[0].Instances[0].Applied[0].Data)
	}
	if rows[0].State["total"].Str != "10" {
		t.Errorf("total %q, want 10", rows[0].State["total"].Str)
	}
	back, err := h.ReadStream(ctx, testlogic.Stream, "a1", 0, 0)
	if err != nil || len(back) != 3 || !abi.ItemsEqual(back[0].Data, evs[0].Data) {
		t.Errorf("ReadStream: %v %+v", err, back)
	}
}

// upper is a toy user codec: reversible, recognisable.
var upper = host.CodecFuncs{
	CompressFunc:   func(b []byte) ([]byte, error) { return append([]byte("UP:"), b...), nil },
	DecompressFunc: func(b []byte) ([]byte, error) { return bytes.TrimPrefix(b, []byte("UP:")), nil },
}

// TestES4_UnknownCodecIsADecodeFailureNamingIt: events packed with a
// user codec decode on a host that registered it; on one that did not, the
// record is a decode failure naming the codec and what to do, reported in
// the batch response (not lost), and a gap-fill read over it fails the row.
func TestES4_UnknownCodecIsADecodeFailureNamingIt(t *testing.T) {
	ctx := context.Background()
	w, r, _, _ := packedHosts(t, &host.CompressionConfig{Codec: "upper"},
		[]host.Option{host.WithCompression("upper", upper)}, []host.Option{})
	evs, err := w.Append(ctx, testlogic.Stream, "b1", 0,
		host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N("4")}},
		host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N("1")}})
	if err != nil {
		t.Fatal(err)
	}
	if it := w.EventItem(evs[0]); !bytes.HasPrefix(it["data"].Bytes, []byte("UP:")) {
		t.Fatalf("not packed by the user codec: %v", it["data"])
	}
	// The writer, which has the codec, folds them.
	res, err := w.ProcessBatch(ctx, []host.Record{insertRecord(w, evs[0], 1)})
	if err != nil || len(res.DecodeFailures) != 0 || res.Projections["ledger"].Rows[0].State["total"].Str != "4" {
		t.Fatalf("writer: %v %+v", err, res)
	}
	// The reader lacks it.
	res, err = r.ProcessBatch(ctx, []host.Record{insertRecord(w, evs[1], 2)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.DecodeFailures) != 1 {
		t.Fatalf("decode failures %+v, want 1", res.DecodeFailures)
	}
	ferr := res.DecodeFailures[0].Err
	if !errors.Is(ferr, host.ErrUnknownCodec) || !strings.Contains(ferr.Error(), `"upper"`) || !strings.Contains(ferr.Error(), "WithCompression") {
		t.Errorf("failure %v: want ErrUnknownCodec naming \"upper\" and how to register it", ferr)
	}
	resp, err := res.Response()
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "2" {
		t.Errorf("response %+v %v: the record must be reported failed", resp, err)
	}
	// A record the reader can decode whose gap read meets the packed v1: the row fails, reported.
	plain, err := r.Append(ctx, testlogic.Stream, "b1", 2, host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N("1")}})
	if err != nil {
		t.Fatal(err)
	}
	res, err = r.ProcessBatch(ctx, []host.Record{insertRecord(r, plain[0], 3)})
	if err != nil {
		t.Fatal(err)
	}
	rows := res.Projections["ledger"].Rows
	if len(rows) != 1 || rows[0].Err == nil || !errors.Is(rows[0].Err, host.ErrUnknownCodec) {
		t.Fatalf("rows %+v: the gap read over the packed events must fail the row with the codec error", rows)
	}
	if resp, _ := res.Response(); len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "3" {
		t.Errorf("response %+v: the row's record must be reported failed", resp)
	}
}

// TestES6_CompressionConfigIsChecked: a codec nobody registered is refused
// when the host starts.
func TestES6_CompressionConfigIsChecked(t *testing.T) {
	env := testenv.Start(t)
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: "e", Schema: "test", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: testlogic.Stream, Composite: []string{"acctId"}}}, Compression: &host.CompressionConfig{Codec: "zstd"}},
		Projections: []host.ProjectionConfig{{Name: "ledger", Plugin: "native:ledger", Table: "l", Checkpoint: host.CheckpointConfig{Field: "cp"}}},
	}
	_, err := host.New(context.Background(), cfg, host.WithNative("ledger", &testlogic.Ledger{}), host.WithClient(env.Client))
	if !errors.Is(err, host.ErrUnknownCodec) || !strings.Contains(err.Error(), `"zstd"`) {
		t.Errorf("New: %v, want ErrUnknownCodec naming zstd", err)
	}
	cfg.EventStore.Compression = &host.CompressionConfig{MinBytes: -1}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "compression.codec") || !strings.Contains(err.Error(), "minBytes") {
		t.Errorf("Validate: %v, want problems for codec and minBytes", err)
	}
}
