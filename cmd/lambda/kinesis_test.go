package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	handler "github.com/dynafold/dynafold/host/lambda"

	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
)

// TestK1_FunctionFoldsAKinesisEvent: the function as Lambda starts it, fed
// by an event source mapping on a Kinesis data stream the event table
// streams its changes to: DYNAFOLD_SOURCE stays "lambda", the handler
// tells the records' kind, and the captured Kinesis event (a duplicate,
// two changes out of order) writes the rows.
func TestK1_FunctionFoldsAKinesisEvent(t *testing.T) {
	env, events, rows := newTestEnv(t)
	plugins := t.TempDir()
	wasmPlugin(t, plugins)
	cfg := orderConfig(events, rows, "order-summary.wasm")
	cfg["projections"] = cfg["projections"].([]any)[:1]
	path := writeConfig(t, t.TempDir(), cfg)
	fn, err := initFunction(context.Background(), envOf(map[string]string{envConfig: path, envSource: "lambda",
		envPluginDir: plugins, envEndpoint: env.Server.Endpoint(), envRegion: "us-east-1"}), slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	ev := readFixture(t, "kinesis_event.json")
	seedEvents(t, env, events, ev)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := fn(ctx, ev)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("invoke: %+v, %v; want no failures", resp, err)
	}
	for id, want := range map[string][2]string{"o-1": {"19.75", "4"}, "o-2": {"100", "2"}, "o-3": {"0", "1"}} {
		row := env.Get(t, rows, ordersummary.RowKey(id))
		if row["total"].Str != want[0] || row["version"].Str != want[1] {
			t.Errorf("row %s = %v, want total %s at version %s", id, row, want[0], want[1])
		}
	}
}

// TestK1_KinesisIsNotASourceOfItsOwn: DYNAFOLD_SOURCE=kinesis is refused
// with the way to a Kinesis mapping (it is "lambda", or "pipe").
func TestK1_KinesisIsNotASourceOfItsOwn(t *testing.T) {
	path := writeConfig(t, t.TempDir(), orderConfig("events", "rows", "order-summary.wasm"))
	_, err := initFunction(context.Background(), envOf(map[string]string{envConfig: path, envSource: "kinesis"}), slog.Default())
	if !errors.Is(err, handler.ErrUnknownSource) || !strings.Contains(err.Error(), "reads Kinesis records by their eventSource") {
		t.Fatalf("err = %v, want ErrUnknownSource saying a Kinesis mapping is lambda or pipe", err)
	}
}
