package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
)

// kinesisFile is the part of a Lambda Kinesis event the tests read, the
// data decoded.
type kinesisFile struct {
	Records []struct {
		EventSource string `json:"eventSource"`
		EventID     string `json:"eventID"`
		Kinesis     struct {
			SequenceNumber string `json:"sequenceNumber"`
			Data           []byte `json:"data"` // base64 on the wire
		} `json:"kinesis"`
	}
}

// change is the part of a change record the tests read.
type change struct {
	EventName, EventSource, RecordFormat, TableName string
	DynamoDB                                        struct {
		ApproximateCreationDateTime float64
		NewImage                    map[string]map[string]any
	}
}

func readKinesisFile(t *testing.T, raw []byte) (kinesisFile, []change) {
	t.Helper()
	var f kinesisFile
	require.NoError(t, json.Unmarshal(raw, &f), string(raw))
	var cs []change
	for _, r := range f.Records {
		var c change
		require.NoError(t, json.Unmarshal(r.Kinesis.Data, &c), string(r.Kinesis.Data))
		cs = append(cs, c)
	}
	return f, cs
}

// TestK1_CaptureKinesisRoundTrip: `host capture --kinesis` writes the
// records (from the event store, or as the table's stream delivered them)
// as a Lambda Kinesis event, in either precision; `host apply` folds that
// file like the stream event.
func TestK1_CaptureKinesisRoundTrip(t *testing.T) {
	cfgPath, env, summaries := orderConfig(t)
	appendOrdersCmd(t, cfgPath)
	dir := t.TempDir()

	fromStream := filepath.Join(dir, "stream.json")
	require.Equal(t, 0, run(context.Background(), []string{"capture", "--config", cfgPath, "--stream", "Order", "--from-stream",
		"--kinesis", "--precision", "MICROSECOND", "--out", fromStream}, os.Stdout, os.Stderr))
	raw, err := os.ReadFile(fromStream)
	require.NoError(t, err)
	f, cs := readKinesisFile(t, raw)
	require.Len(t, f.Records, 3)
	for i, r := range f.Records {
		assert.Equal(t, "aws:kinesis", r.EventSource)
		assert.Equal(t, "INSERT", cs[i].EventName)
		assert.Equal(t, "aws:dynamodb", cs[i].EventSource)
		assert.Equal(t, "application/json", cs[i].RecordFormat)
		assert.Contains(t, cs[i].TableName, "events")
		assert.Greater(t, cs[i].DynamoDB.ApproximateCreationDateTime, 1e15, "microseconds")
		assert.Equal(t, map[string]any{"S": "order.event"}, cs[i].DynamoDB.NewImage["__edd_e__"])
		if i > 0 {
			assert.Less(t, f.Records[i-1].Kinesis.SequenceNumber, r.Kinesis.SequenceNumber, "a shard's order")
		}
	}

	out := captureStdout(t, func() {
		require.NoError(t, runApply(context.Background(), []string{"--config", cfgPath, "--records", fromStream, "--json"}))
	})
	assert.JSONEq(t, `{"batchItemFailures": []}`, out)
	row := env.Get(t, summaries, abi.Item{"pk": abi.S("OrderSummary#o-1"), "sk": abi.S("OrderSummary")})
	assert.Equal(t, "2.5", row["total"].Str)
	row = env.Get(t, summaries, abi.Item{"pk": abi.S("OrderSummary#o-2"), "sk": abi.S("OrderSummary")})
	assert.Equal(t, "placed", row["status"].Str)

	// From the event store, in milliseconds (the default); applied again,
	// the events are already applied.
	out = captureStdout(t, func() {
		require.NoError(t, runCapture(context.Background(), []string{"--config", cfgPath, "--stream", "Order", "--id", "o-1", "--kinesis"}))
	})
	f, cs = readKinesisFile(t, []byte(out))
	require.Len(t, f.Records, 2)
	assert.Less(t, cs[0].DynamoDB.ApproximateCreationDateTime, 1e14, "milliseconds")
	assert.Greater(t, cs[0].DynamoDB.ApproximateCreationDateTime, 1e11, "milliseconds")
	fromStore := filepath.Join(dir, "store.json")
	require.NoError(t, os.WriteFile(fromStore, []byte(out), 0o600))
	out = captureStdout(t, func() {
		require.NoError(t, runApply(context.Background(), []string{"--config", cfgPath, "--records", fromStore}))
	})
	assert.Contains(t, out, "2 records: 2 events, 0 ignored, 0 failed to decode")
	assert.Contains(t, out, "already applied v1-v2 (2)")

	assert.Equal(t, 1, run(context.Background(), []string{"capture", "--config", cfgPath, "--stream", "Order", "--kinesis", "--precision", "SECOND"}, os.Stdout, os.Stderr))
	assert.Equal(t, 1, run(context.Background(), []string{"capture", "--config", cfgPath, "--stream", "Order", "--precision", "MICROSECOND"}, os.Stdout, os.Stderr),
		"--precision without --kinesis")
}

// TestK1_ApplyCommandReadsAKinesisEvent: `host apply` takes a Lambda
// Kinesis event file as it takes a stream event, and names a failed row's
// record by its Kinesis sequence number; an unreadable record's data is
// refused naming the record.
func TestK1_ApplyCommandReadsAKinesisEvent(t *testing.T) {
	cfgPath, env, summaries := orderConfig(t)
	appendOrdersCmd(t, cfgPath)
	captureStdout(t, func() {
		require.NoError(t, runAppend(context.Background(), []string{"--config", cfgPath, "--stream", "Order", "--id", "o-3",
			"--type", "ItemAdded", "--data", `{"sku":"s","price":"free"}`})) // the plugin cannot fold it
	})
	out := captureStdout(t, func() {
		require.NoError(t, runCapture(context.Background(), []string{"--config", cfgPath, "--stream", "Order", "--kinesis"}))
	})
	f, cs := readKinesisFile(t, []byte(out))
	require.Len(t, f.Records, 4)
	var o3 string
	for i, c := range cs {
		if c.DynamoDB.NewImage["streamId"]["S"] == "o-3" {
			o3 = f.Records[i].Kinesis.SequenceNumber
		}
	}
	require.NotEmpty(t, o3)
	path := filepath.Join(t.TempDir(), "kinesis.json")
	require.NoError(t, os.WriteFile(path, []byte(out), 0o600))
	out = captureStdout(t, func() {
		require.NoError(t, runApply(context.Background(), []string{"--config", cfgPath, "--records", path, "--json"}))
	})
	assert.JSONEq(t, `{"batchItemFailures": [{"itemIdentifier": "`+o3+`"}]}`, out)
	row := env.Get(t, summaries, abi.Item{"pk": abi.S("OrderSummary#o-1"), "sk": abi.S("OrderSummary")})
	assert.Equal(t, "2.5", row["total"].Str)

	var ev map[string][]map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &ev))
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &ev))
	ev["Records"][1]["kinesis"].(map[string]any)["data"] = base64.StdEncoding.EncodeToString([]byte("not a change record"))
	raw, err = json.Marshal(ev)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, raw, 0o600))
	err = runApply(context.Background(), []string{"--config", cfgPath, "--records", path, "--json"})
	require.ErrorContains(t, err, "is not JSON")
	assert.ErrorContains(t, err, f.Records[1].EventID)
}

// TestK1_FilterPatternCommandPrintsTheKinesisFilter: with --kinesis the
// filter matches inside each Kinesis record's data.
func TestK1_FilterPatternCommandPrintsTheKinesisFilter(t *testing.T) {
	cfgPath, _, _ := orderConfig(t)
	out := captureStdout(t, func() {
		require.NoError(t, runFilterPattern(context.Background(), []string{"--config", cfgPath, "--kinesis"}))
	})
	var fc struct{ Filters []struct{ Pattern string } }
	require.NoError(t, json.Unmarshal([]byte(out), &fc), out)
	require.Len(t, fc.Filters, 1)
	assert.JSONEq(t, `{"data":{"eventName":["INSERT"],"dynamodb":{"NewImage":{"__edd_e__":{"S":["order.event"]}}}}}`, fc.Filters[0].Pattern)
}
