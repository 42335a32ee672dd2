package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dynafold/dynafold/abi"
)

// CaptureOptions selects the events Capture writes as records.
type CaptureOptions struct {
	Stream   string // the stream (required)
	StreamID string // one instance; empty: every instance in the event store (a Scan)
	From, To uint64 // versions From..To inclusive (0: from the first, to the head)
	Region   string // the records' awsRegion (default the configuration's)
}

// Capture reads a range of a stream from the event store and returns it as
// the change-feed records an event source mapping would deliver for it
// (INSERTs with the event's item as NewImage, in version order per
// instance), for `host apply`, WhatIf and tests. The records' sequence
// numbers and event ids are derived from the events, so a capture of the
// same range is the same file.
func (h *Host) Capture(ctx context.Context, o CaptureOptions) ([]Record, error) {
	st, err := h.stream(o.Stream)
	if err != nil {
		return nil, err
	}
	ids := []string{o.StreamID}
	if o.StreamID == "" {
		if ids, err = h.streamIDs(ctx, st.Name); err != nil {
			return nil, err
		}
	}
	region := o.Region
	if region == "" {
		region = h.cfg.Region
	}
	arn := fmt.Sprintf("arn:aws:dynamodb:%s:000000000000:table/%s/stream/captured", region, h.es.Table())
	layout := h.es.Layout()
	var out []Record
	after := uint64(0)
	if o.From > 1 {
		after = o.From - 1
	}
	for _, id := range ids {
		evs, err := h.es.ReadFrom(ctx, st, id, after, o.To)
		if err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", st.Name, id, err)
		}
		for _, ev := range evs {
			item := layout.Item(ev)
			at, _ := time.Parse(time.RFC3339Nano, ev.Timestamp) // zero when the event has none
			key := layout.Key(ev.Stream, ev.StreamID, ev.Version)
			sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%d", ev.Stream, ev.StreamID, ev.Version)))
			out = append(out, Record{
				EventID: hex.EncodeToString(sum[:16]), EventName: EventInsert, EventVersion: "1.1",
				EventSource: "aws:dynamodb", EventSourceARN: arn, AWSRegion: region,
				DynamoDB: StreamRecord{
					ApproximateCreationDateTime: at.Truncate(time.Second),
					Keys:                        key, NewImage: item,
					SequenceNumber: fmt.Sprintf("1%020d", len(out)+1),
					StreamViewType: "NEW_IMAGE",
				},
			})
		}
	}
	return out, nil
}

// RecordEvent decodes a change-feed record's new image as an event of a
// configured stream; false when the record carries none (a REMOVE, another
// item of the table, a stream not configured).
func (h *Host) RecordEvent(r Record) (abi.Event, bool, error) {
	if r.DynamoDB.NewImage == nil || h.dopts.Decoder == nil {
		return abi.Event{}, false, nil
	}
	d, ok, err := h.dopts.Decoder.Decode(r.DynamoDB.NewImage)
	if err != nil || !ok {
		return abi.Event{}, false, err
	}
	return d.Event, true, nil
}

// RecordKeyInRange reports whether a change-feed record's keys (else its
// new image's key attributes) are those the event store composes for an
// event of stream (of instance id, when id is not empty) with a version
// from..to (to 0: to the head): how `host capture --from-stream` places a
// record whose image does not decode as an event.
func (h *Host) RecordKeyInRange(r Record, stream, id string, from, to uint64) bool {
	st, err := h.stream(stream)
	if err != nil {
		return false
	}
	l := h.es.Layout()
	item := r.DynamoDB.Keys
	if item == nil {
		item = r.DynamoDB.NewImage
	}
	pk, sk := item[l.PKName()], item[l.SKName()]
	if pk.Kind != abi.KindS || sk.Kind != abi.KindS {
		return false
	}
	if id != "" && pk.Str != l.PK(st.Name, id) || id == "" && !strings.HasPrefix(pk.Str, l.PK(st.Name, "")) {
		return false
	}
	digits, ok := strings.CutPrefix(sk.Str, l.SKPrefix(st.Name))
	if !ok {
		return false
	}
	v, err := strconv.ParseUint(digits, 10, 64)
	return err == nil && v >= from && (to == 0 || v <= to)
}
