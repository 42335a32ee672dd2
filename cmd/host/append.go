package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
)

func runAppend(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("append", flag.ContinueOnError)
	cfgPath := fs.String("config", "dynafold.json", "configuration file")
	stream := fs.String("stream", "", "stream name, e.g. Order")
	id := fs.String("id", "", "stream id (composites joined with #)")
	typ := fs.String("type", "", "event type, e.g. OrderPlaced")
	data := fs.String("data", "{}", "event data as plain JSON")
	expect := fs.Int64("expect", -1, "expected current version (default: the stream's head)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *stream == "" || *id == "" || *typ == "" {
		return fmt.Errorf("--stream, --id and --type are required")
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
	item, err := jsonItem(*data)
	if err != nil {
		return fmt.Errorf("--data: %w", err)
	}
	head := uint64(*expect)
	if *expect < 0 {
		if head, err = h.Head(ctx, *stream, *id); err != nil {
			return err
		}
	}
	evs, err := h.Append(ctx, *stream, *id, head, host.NewEvent{Type: *typ, Data: item})
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
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	v, err := jsonValue(m)
	return v.Map, err
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
