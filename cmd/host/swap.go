package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/host/swap"
)

func init() {
	pluginCommands = append(pluginCommands, command{"rollback",
		"put the previous plugin version back where running hosts pick it up (--s3 s3://BUCKET/KEY, or --file F --archive DIR)", runPluginRollback})
	// `host rebuild --written-by VERSION` extends the rebuild command of
	// operate.go (initialized before this file): other uses go to it.
	for i, c := range commands {
		if c.name == "rebuild" {
			inner := c.run
			commands[i].usage += "; or every row written by a plugin version (--projection, --written-by NAME@VERSION or VERSION)"
			commands[i].run = func(ctx context.Context, args []string) error {
				for _, a := range args {
					if a == "--written-by" || a == "-written-by" || strings.HasPrefix(a, "--written-by=") || strings.HasPrefix(a, "-written-by=") {
						return runRebuildWrittenBy(ctx, args)
					}
				}
				return inner(ctx, args)
			}
		}
	}
}

func runPluginRollback(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("plugin rollback", flag.ContinueOnError)
	s3url := fs.String("s3", "", "the plugin object, s3://BUCKET/KEY, in a versioned bucket")
	endpoint := fs.String("endpoint", "", "S3-compatible endpoint (default: AWS)")
	region := fs.String("region", "", "S3 region (default us-east-1)")
	file := fs.String("file", "", "the watched plugin file")
	archive := fs.String("archive", "", "the archive of accepted modules (hotSwap.archive)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *s3url != "":
		bucket, key, ok := strings.Cut(strings.TrimPrefix(*s3url, "s3://"), "/")
		if !strings.HasPrefix(*s3url, "s3://") || !ok || bucket == "" || key == "" {
			return fmt.Errorf("--s3 %q is not s3://BUCKET/KEY", *s3url)
		}
		client, err := swap.NewS3Client(ctx, *endpoint, *region)
		if err != nil {
			return err
		}
		from, to, err := swap.RollbackS3(ctx, client, bucket, key)
		if err != nil {
			return err
		}
		fmt.Fprintf(pluginOut, "%s: version %s is current again (new version %s); hosts polling it swap it in\n", *s3url, from, to)
		return nil
	case *file != "" && *archive != "":
		used, err := swap.RollbackDir(*archive, *file)
		if err != nil {
			return err
		}
		fmt.Fprintf(pluginOut, "%s: replaced by %s; hosts watching it swap it in\n", *file, used)
		return nil
	}
	return fmt.Errorf("name the plugin's source: --s3 s3://BUCKET/KEY, or --file F --archive DIR")
}

// runRebuildWrittenBy rebuilds every row of a projection whose writtenBy
// attribute names a plugin version (SPEC Y3): a Scan of the read model
// finds the rows, a Scan of the event store the stream instances, and
// each instance whose events fold into one of those rows is rebuilt by the
// current plugin.
func runRebuildWrittenBy(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("rebuild", flag.ContinueOnError)
	cfgPath := fs.String("config", "dynafold.json", "configuration file")
	proj := fs.String("projection", "", "projection name (default: the only one)")
	by := fs.String("written-by", "", "plugin version whose rows to rebuild: NAME@VERSION, or VERSION of the projection's plugin")
	dry := fs.Bool("dry-run", false, "list the rows and stream instances, rebuild nothing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := host.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	h, err := host.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	if *proj == "" && len(h.Projections()) == 1 {
		*proj = h.Projections()[0]
	}
	e, ok := h.Projection(*proj)
	if !ok {
		return fmt.Errorf("no projection %q; the configuration has %v", *proj, h.Projections())
	}
	attr := e.Projection().WrittenBy
	for _, pc := range cfg.Projections {
		if pc.Name == *proj && pc.WrittenBy != "" {
			attr = pc.WrittenBy // the engine may leave it to a hot-swapped plugin's Swapper
		}
	}
	n, err := rebuildWrittenBy(ctx, h, e, attr, *by, *dry)
	if err != nil {
		return err
	}
	fmt.Fprintf(pluginOut, "%d stream instances rebuilt\n", n)
	return nil
}

func rebuildWrittenBy(ctx context.Context, h *host.Host, e *apply.Engine, attr, by string, dry bool) (int, error) {
	p := e.Projection()
	if attr == "" {
		return 0, fmt.Errorf("projection %q records no writtenBy attribute; configure \"writtenBy\" (SPEC Y3)", p.Name)
	}
	if by == "" {
		return 0, fmt.Errorf("--written-by is required")
	}
	if !strings.Contains(by, "@") {
		by = p.Logic.Describe().Name + "@" + by
	}
	client := h.DB().Client()
	rows := map[string]bool{}
	err := scan(ctx, client, &dynamodb.ScanInput{
		TableName:                 aws.String(p.Table),
		FilterExpression:          aws.String("#wb = :wb"),
		ExpressionAttributeNames:  map[string]string{"#wb": attr},
		ExpressionAttributeValues: map[string]types.AttributeValue{":wb": &types.AttributeValueMemberS{Value: by}},
	}, func(it abi.Item) {
		key := abi.Item{}
		for _, a := range p.KeyAttrs {
			key[a] = it[a]
		}
		rows[swap.KeyString(key)] = true
	})
	if err != nil {
		return 0, fmt.Errorf("scanning %s for rows written by %s: %w", p.Table, by, err)
	}
	fmt.Fprintf(pluginOut, "%d rows of %s written by %s\n", len(rows), p.Table, by)
	if len(rows) == 0 {
		return 0, nil
	}
	es := h.EventStore()
	src := p.Sources[0]
	stream, ok := h.Stream(src.Stream)
	if !ok {
		return 0, fmt.Errorf("stream %q is not configured", src.Stream)
	}
	ids := map[string]bool{}
	var order []string
	err = scan(ctx, client, &dynamodb.ScanInput{
		TableName:                 aws.String(es.Table()),
		FilterExpression:          aws.String("#m = :m"),
		ProjectionExpression:      aws.String("#id"),
		ExpressionAttributeNames:  map[string]string{"#m": eventstore.AttrMarker, "#id": eventstore.AttrStreamID},
		ExpressionAttributeValues: map[string]types.AttributeValue{":m": &types.AttributeValueMemberS{Value: es.Layout().Marker(src.Stream)}},
	}, func(it abi.Item) {
		if id := it[eventstore.AttrStreamID].Str; id != "" && !ids[id] {
			ids[id] = true
			order = append(order, id)
		}
	})
	if err != nil {
		return 0, fmt.Errorf("scanning the event store for %s streams: %w", src.Stream, err)
	}
	rebuilt := 0
	for _, id := range order {
		evs, err := es.ReadFrom(ctx, stream, id, 0, 0)
		if err != nil {
			return rebuilt, err
		}
		if len(evs) == 0 {
			continue
		}
		keys, err := p.Logic.Key(ctx, &abi.KeyRequest{Source: src.Name, Events: evs})
		if err != nil {
			return rebuilt, fmt.Errorf("key of %s %s: %w", src.Stream, id, err)
		}
		hit := false
		for _, k := range keys.Keys {
			if k.Key != nil && rows[swap.KeyString(k.Key)] {
				hit = true
				break
			}
		}
		if !hit {
			continue
		}
		if dry {
			fmt.Fprintf(pluginOut, "would rebuild %s %s\n", src.Stream, id)
			rebuilt++
			continue
		}
		outs, err := e.Rebuild(ctx, id)
		for _, o := range outs {
			fmt.Fprintf(pluginOut, "%s %s: row %s written %v\n", src.Stream, id, swap.KeyString(o.Key), o.Written)
		}
		if err != nil {
			return rebuilt, fmt.Errorf("rebuild of %s %s: %w", src.Stream, id, err)
		}
		rebuilt++
	}
	return rebuilt, nil
}

// scan runs a Scan to its end, calling f with each item.
func scan(ctx context.Context, client *dynamodb.Client, in *dynamodb.ScanInput, f func(abi.Item)) error {
	for {
		out, err := client.Scan(ctx, in)
		if err != nil {
			return err
		}
		for _, m := range out.Items {
			it, err := dynamo.FromAttributeMap(m)
			if err != nil {
				return err
			}
			f(it)
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}
