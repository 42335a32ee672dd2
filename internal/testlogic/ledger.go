// Package testlogic is a projection's logic written natively against the
// abi, used only by tests: it exercises every path of the engine (ignored
// events, rows keyed by event fields, skip, terminal rejections, failures,
// hidden attributes, toItem) and records its fold in the row, so a test can
// compare a row with the sequential fold of its events.
package testlogic

import (
	"context"
	"strconv"
	"sync/atomic"

	"github.com/dynafold/dynafold/abi"
)

// Stream is the stream the Ledger reads.
const Stream = "Acct"

// Ledger folds events of stream "Acct". An event's data:
//
//	_tag  "Add" (total += n), "Same" (state unchanged, still applied),
//	      "Skip" (skip), "Reject" (rejected by terminal), "Fail" (fails the row),
//	      "Close" (removeRow: the row becomes a tombstone)
//	n     a number (Add)
//	row   optional: the row's name; default the stream id
//	none  optional BOOL true: the event addresses no row
//
// A row is {pk: "Ledger#<row>", sk: "L", total, count, log}, where log lists
// the applied versions ("1,2,5"); toItem adds doubled = 2 × total.
type Ledger struct {
	EvolveCalls atomic.Int64
	KeyCalls    atomic.Int64
	// OnEvolve, when set, runs at the start of every evolve call: a test
	// uses it to write the row between the engine's read and its write.
	OnEvolve func(req *abi.EvolveRequest)
}

// Describe implements logic.Logic.
func (l *Ledger) Describe() abi.Description {
	return abi.Description{Name: "ledger", Version: "1.0.0", ABIMajor: abi.VersionMajor, ABIMinor: abi.VersionMinor,
		Sources:      []abi.SourceDesc{{Name: Stream, Stream: Stream, EventTypes: []string{"Add", "Same", "Skip", "Reject", "Fail", "Close"}, Mode: abi.ModeFold}},
		Capabilities: []abi.Capability{abi.CapDescribe, abi.CapKey, abi.CapEvolve, abi.CapTerminal, abi.CapToItem}}
}

// RowKey is the key of the row named row.
func RowKey(row string) abi.Item {
	return abi.Item{"pk": abi.S("Ledger#" + row), "sk": abi.S("L")}
}

// Key implements logic.Logic.
func (l *Ledger) Key(_ context.Context, req *abi.KeyRequest) (*abi.KeyResponse, error) {
	l.KeyCalls.Add(1)
	out := &abi.KeyResponse{Keys: make([]abi.KeyResult, len(req.Events))}
	for i, ev := range req.Events {
		if v, ok := ev.Data["none"]; ok && v.Bool {
			continue
		}
		row := ev.StreamID
		if v, ok := ev.Data["row"]; ok {
			row = v.Str
		}
		out.Keys[i].Key = RowKey(row)
	}
	return out, nil
}

// Evolve implements logic.Logic.
func (l *Ledger) Evolve(_ context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, error) {
	l.EvolveCalls.Add(1)
	if l.OnEvolve != nil {
		l.OnEvolve(req)
	}
	state := req.State
	resp := &abi.EvolveResponse{}
	removed := false
	for _, se := range req.Events {
		ev := se.Event
		if ev.Type == "Close" {
			state, removed = nil, true
			resp.Decisions = append(resp.Decisions, abi.Decision{Outcome: abi.Applied, Remove: true})
			continue
		}
		var next abi.Item
		if state == nil {
			next = abi.Item{"total": abi.N("0"), "count": abi.N("0"), "log": abi.S("")}
		} else {
			next = abi.CloneItem(state)
		}
		switch ev.Type {
		case "Add":
			n, _ := strconv.ParseInt(ev.Data["n"].Str, 10, 64)
			next["total"] = abi.N(strconv.FormatInt(num(next["total"])+n, 10))
		case "Same":
		case "Skip":
			resp.Decisions = append(resp.Decisions, abi.Decision{Outcome: abi.Skipped})
			continue
		case "Reject":
			resp.Decisions = append(resp.Decisions, abi.Decision{Outcome: abi.Rejected, Error: &abi.Error{Tag: "Rejected", Message: "v" + strconv.FormatUint(ev.Version, 10)}})
			continue
		default:
			resp.Decisions = append(resp.Decisions, abi.Decision{Outcome: abi.Failed, Error: &abi.Error{Tag: "Boom", Message: "event type " + ev.Type}})
			return resp, nil
		}
		next["count"] = abi.N(strconv.FormatInt(num(next["count"])+1, 10))
		log := next["log"].Str
		if log != "" {
			log += ","
		}
		next["log"] = abi.S(log + strconv.FormatUint(ev.Version, 10))
		state, removed = next, false
		resp.Decisions = append(resp.Decisions, abi.Decision{Outcome: abi.Applied})
	}
	resp.State, resp.Removed = state, removed
	if state != nil {
		item := abi.CloneItem(state)
		item["doubled"] = abi.N(strconv.FormatInt(2*num(state["total"]), 10))
		resp.Item = item
	}
	return resp, nil
}

// Close implements logic.Logic.
func (l *Ledger) Close(context.Context) error { return nil }

func num(v abi.Value) int64 {
	n, _ := strconv.ParseInt(v.Str, 10, 64)
	return n
}
