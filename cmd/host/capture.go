package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/lambdaevents"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/privfile"
)

func runCapture(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("capture", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `usage: host capture --config FILE --stream NAME [--id ID] [--from V] [--to V] [--from-stream] [--kinesis [--precision P]] [--out FILE]

Writes a range of a stream from the event store as a Lambda DynamoDB stream
event ({"Records": [...]}), the file host apply and host replay read.
With --from-stream the records are read from the event table's DynamoDB
stream instead, as it delivered them (only what the stream still holds); a
record whose item does not decode as an event is kept when its keys are
those of an event of the range, and otherwise named in a warning on stderr
(its sequence number), never left out silently.
With --kinesis the same records are written as a Lambda Kinesis event: each
one the change record the table would write to a Kinesis data stream
(Kinesis Data Streams for DynamoDB), base64 in the Kinesis record's data,
with ascending sequence numbers in the file's order.

examples:
  host capture --config dynafold.json --stream Order --id o-1 --from 3 --out batch.json
  host capture --config dynafold.json --stream Order --kinesis --precision MICROSECOND --out kinesis.json

flags:`)
		fs.PrintDefaults()
	}
	cfgPath := fs.String("config", "dynafold.json", "configuration file")
	stream := fs.String("stream", "", "stream name, e.g. Order (required)")
	id := fs.String("id", "", "stream id (composites joined with #); empty: every instance of the stream (scans the event table)")
	from := fs.Uint64("from", 0, "first version (0: the first)")
	to := fs.Uint64("to", 0, "last version (0: the head)")
	out := fs.String("out", "-", "output file, or - for stdout")
	fromStream := fs.Bool("from-stream", false, "read the records from the event table's DynamoDB stream (what the stream still holds, with its sequence numbers) instead of the event store")
	kinesis := fs.Bool("kinesis", false, "write a Lambda Kinesis event: the records as the table's Kinesis streaming destination writes them")
	precision := fs.String("precision", "", "with --kinesis, the unit of the change records' ApproximateCreationDateTime: MILLISECOND (default) or MICROSECOND, as the table's ApproximateCreationDateTimePrecision")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := flagsOnly(fs, ""); err != nil {
		return err
	}
	if *stream == "" {
		return fmt.Errorf("--stream is required: the stream to capture, e.g. --stream Order")
	}
	if *precision != "" && !*kinesis {
		return fmt.Errorf("--precision is the unit of a Kinesis record's creation time: add --kinesis")
	}
	switch p := strings.ToUpper(*precision); p {
	case "", lambdaevents.PrecisionMillisecond, lambdaevents.PrecisionMicrosecond:
		*precision = p
	default:
		return fmt.Errorf("--precision %q: use %s or %s", *precision, lambdaevents.PrecisionMillisecond, lambdaevents.PrecisionMicrosecond)
	}
	if *to != 0 && *from > *to {
		return fmt.Errorf("--from %d is after --to %d", *from, *to)
	}
	cfg, err := host.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	h, err := host.New(ctx, cfg, host.WithEventStoreOnly()) // no plugin is needed
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	var recs []host.Record
	if *fromStream {
		recs, err = captureStream(ctx, os.Stderr, h, cfg, *stream, *id, *from, *to)
	} else {
		recs, err = h.Capture(ctx, host.CaptureOptions{Stream: *stream, StreamID: *id, From: *from, To: *to})
	}
	if err != nil {
		return err
	}
	var doc any = map[string]any{"Records": recs}
	if recs == nil {
		doc = map[string]any{"Records": []host.Record{}}
	}
	if *kinesis {
		if doc, err = kinesisEvent(recs, cfg, *precision); err != nil {
			return err
		}
	}
	w := os.Stdout
	if *out != "-" {
		f, loose, err := privfile.Create(*out) // 0600: the records hold whole events
		if err != nil {
			return err
		}
		loose.Log(slog.Default())
		defer f.Close()
		w = f
	}
	if err := writeJSON(w, doc); err != nil {
		return err
	}
	if *out != "-" {
		fmt.Fprintf(os.Stderr, "%s written to %s\n", plural(len(recs), "record"), *out)
		return w.Close()
	}
	return nil
}

// captureStream reads the event table's stream, every shard parents first,
// and keeps the records of the stream's events in the range, as read; a
// record whose item does not decode is kept when its keys are those of an
// event of the range, else it is named on warn.
func captureStream(ctx context.Context, warn io.Writer, h *host.Host, cfg *host.Config, stream, id string, from, to uint64) ([]host.Record, error) {
	client, err := ddbclient.NewClient(ctx, cfg.Endpoint, cfg.Region)
	if err != nil {
		return nil, err
	}
	desc, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(cfg.EventStore.Table)})
	if err != nil {
		return nil, fmt.Errorf("event table %s: %w", cfg.EventStore.Table, err)
	}
	arn := aws.ToString(desc.Table.LatestStreamArn)
	if arn == "" {
		return nil, fmt.Errorf("event table %s has no stream: `host tables create` enables it (NEW_IMAGE)", cfg.EventStore.Table)
	}
	o := client.Options()
	sc := dynamodbstreams.NewFromConfig(aws.Config{Region: o.Region, Credentials: o.Credentials, HTTPClient: o.HTTPClient},
		func(so *dynamodbstreams.Options) { so.BaseEndpoint = o.BaseEndpoint })
	all, err := readFeed(ctx, sc, arn)
	if err != nil {
		return nil, err
	}
	var out []host.Record
	var leftOut []string
	for _, r := range all {
		ev, ok, err := h.RecordEvent(r)
		if err != nil {
			// the image does not decode: the record an operator captures
			// to reproduce a stuck shard; its keys say whether it is of
			// the range
			if h.RecordKeyInRange(r, stream, id, from, to) {
				out = append(out, r)
			} else {
				leftOut = append(leftOut, r.DynamoDB.SequenceNumber)
			}
			continue
		}
		if !ok || ev.Stream != stream || (id != "" && ev.StreamID != id) || ev.Version < from || (to != 0 && ev.Version > to) {
			continue // not an event of the range
		}
		out = append(out, r)
	}
	if len(leftOut) > 0 {
		fmt.Fprintf(warn, "warning: %s of the table's stream left out: their items do not decode as events and their keys name no event of the range asked for; sequence numbers %s (capture a wider range, or read them with aws dynamodbstreams get-records)\n",
			plural(len(leftOut), "record"), strings.Join(leftOut, ", "))
	}
	return out, nil
}

// kinesisEvent writes records as a Lambda Kinesis event from the event
// table's Kinesis streaming destination: one shard, sequence numbers in
// the records' order.
func kinesisEvent(recs []host.Record, cfg *host.Config, precision string) (map[string]any, error) {
	region, account := cfg.Region, "000000000000"
	if len(recs) > 0 {
		// arn:aws:dynamodb:REGION:ACCOUNT:table/...
		if p := strings.Split(recs[0].EventSourceARN, ":"); len(p) > 5 && p[3] != "" && p[4] != "" {
			region, account = p[3], p[4]
		}
	}
	if region == "" {
		region = "us-east-1"
	}
	o := lambdaevents.KinesisOptions{Table: cfg.EventStore.Table, Precision: precision,
		StreamARN: fmt.Sprintf("arn:aws:kinesis:%s:%s:stream/%s-changes", region, account, cfg.EventStore.Table)}
	out := make([]events.KinesisEventRecord, 0, len(recs))
	for i, r := range recs {
		r.DynamoDB.SequenceNumber = fmt.Sprintf("4965%052d", i+1) // 56 digits, as Kinesis writes them
		kr, err := lambdaevents.ToKinesisRecord(r, o)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		out = append(out, kr)
	}
	return map[string]any{"Records": out}, nil
}
