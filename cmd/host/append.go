package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/backoff"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/itemcheck"
)

// appendAttempts bounds the appends at the head that another writer's
// append to the same stream can beat, one after another.
const appendAttempts = 10

// appendBackoff spaces those attempts: 5 ms doubling, jittered, to 200 ms.
var appendBackoff = backoff.Policy{Base: 5 * time.Millisecond, Max: 200 * time.Millisecond}

const appendUsage = `usage: host append --config F --stream S --id ID --type T [--data JSON] [--expect N]

Appends one event to a stream of the event store, as the host writes it (one
TransactWriteItems with the version-contiguity check; the item layout is in
docs/EVENTS.md), and prints the stream, the id, the version it got and the type.
Without --expect the event goes at the stream's head (read first, and read
again when another writer's append took that version meanwhile); with
--expect N the append succeeds only if the stream's head is N (0: a new
stream), so a concurrent writer is caught instead of overtaken.

Examples:
  host append --config dynafold.json --stream Order --id o-1 --type OrderPlaced --data '{"customer": "ann"}'
  host append --config dynafold.json --stream Order --id o-1 --type ItemAdded --data '{"sku": "s-1", "price": 2.5}' --expect 1

Flags:`

func runAppend(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("append", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), appendUsage)
		fs.PrintDefaults()
	}
	cfgPath := fs.String("config", "dynafold.json", "configuration file")
	stream := fs.String("stream", "", "stream name, as in eventStore.streams (e.g. Order)")
	id := fs.String("id", "", "stream id: the composite's value (several joined with #, e.g. acme#o-7)")
	typ := fs.String("type", "", "event type, e.g. OrderPlaced")
	data := fs.String("data", "{}", `event data: a plain JSON object, e.g. '{"amount": 2.5}' (numbers keep their digits)`)
	expect := fs.String("expect", "", "the version the stream's head must be for the append to succeed (0: a new stream); absent: append at the head, whatever it is")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := flagsOnly(fs, ""); err != nil {
		return err
	}
	if *stream == "" || *id == "" || *typ == "" {
		return fmt.Errorf("--stream, --id and --type are required (host append --help shows an example)")
	}
	item, err := jsonItem(*data)
	if err != nil {
		return fmt.Errorf("--data: %w", err)
	}
	if p := itemcheck.Item(item, nil); p != nil {
		return fmt.Errorf("--data: %w; DynamoDB cannot store it, so nothing was appended: give another value, or a string to keep it as text", p)
	}
	var want uint64
	if *expect != "" {
		if want, err = strconv.ParseUint(*expect, 10, 64); err != nil {
			return fmt.Errorf("--expect %q: want a version, 0 or more (0: a new stream)", *expect)
		}
	}
	cfg, err := host.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	h, err := host.New(ctx, cfg, host.WithEventStoreOnly()) // appending needs no plugin
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	var evs []abi.Event
	if *expect == "" {
		// At the head, whatever it is: a concurrent writer that takes the
		// version first only moves the head, so read it again and retry.
		for attempt := 1; ; attempt++ {
			if want, err = h.Head(ctx, *stream, *id); err != nil {
				return err
			}
			evs, err = h.Append(ctx, *stream, *id, want, host.NewEvent{Type: *typ, Data: item})
			if !errors.Is(err, host.ErrVersionConflict) {
				break
			}
			if attempt == appendAttempts {
				return fmt.Errorf("%w: other writers appended to %s %q first %d times in a row; run it again, or append less often to this one stream", err, *stream, *id, attempt)
			}
			if werr := appendBackoff.Wait(ctx, attempt); werr != nil {
				return werr
			}
		}
	} else {
		evs, err = h.Append(ctx, *stream, *id, want, host.NewEvent{Type: *typ, Data: item})
		if errors.Is(err, host.ErrVersionConflict) {
			if head, herr := h.Head(ctx, *stream, *id); herr == nil {
				return fmt.Errorf("%w: the stream's head is %d; append with --expect %d once you have seen events up to it, or without --expect to append at the head", err, head, head)
			}
		}
	}
	if ue := (*ddbclient.UnreachableError)(nil); errors.As(err, &ue) && ue.Sent {
		return fmt.Errorf("%w\nThe event may have been appended: look at the stream's head (host capture --config %s --stream %s --id %s prints its events) before you append it again, or append with --expect N, which cannot append it twice",
			err, *cfgPath, *stream, *id)
	}
	if err != nil {
		return err
	}
	for _, ev := range evs {
		fmt.Fprintf(os.Stdout, "%s %s v%d %s\n", ev.Stream, ev.StreamID, ev.Version, ev.Type)
	}
	return nil
}

// jsonItem converts plain JSON (an object) to an item: numbers keep their
// text, objects become M, arrays L.
func jsonItem(s string) (abi.Item, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, fmt.Errorf("not JSON (%w): want an object such as '{\"amount\": 2.5}'", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value: want one object such as '{\"amount\": 2.5}'")
	}
	m, ok := x.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is %s, not an object: give the attributes by name, e.g. '{\"items\": %s}'", s, jsonKind(x), s)
	}
	v, err := jsonValue(m)
	return v.Map, err
}

// jsonKind names a decoded JSON value's kind.
func jsonKind(x any) string {
	switch x.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a value"
}

func jsonValue(x any) (abi.Value, error) {
	switch v := x.(type) {
	case nil:
		return abi.Null(), nil
	case bool:
		return abi.Bool(v), nil
	case string:
		return abi.S(v), nil
	case json.Number:
		return abi.N(v.String()), nil
	case []any:
		l := make([]abi.Value, len(v))
		for i, e := range v {
			var err error
			if l[i], err = jsonValue(e); err != nil {
				return abi.Value{}, err
			}
		}
		return abi.L(l...), nil
	case map[string]any:
		m := make(abi.Item, len(v))
		for k, e := range v {
			var err error
			if m[k], err = jsonValue(e); err != nil {
				return abi.Value{}, err
			}
		}
		return abi.M(m), nil
	}
	return abi.Value{}, fmt.Errorf("unsupported JSON value %T", x)
}
