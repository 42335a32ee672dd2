package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/dynafold/dynafold/host"
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
	rep, err := h.RebuildWrittenBy(ctx, *proj, *by, *dry)
	fmt.Fprintf(pluginOut, "%d rows of %s written by %s\n", rep.Rows, rep.Table, rep.WrittenBy)
	for _, id := range rep.Streams {
		if *dry {
			fmt.Fprintf(pluginOut, "would rebuild %s\n", id)
		}
	}
	for _, o := range rep.Outcomes {
		fmt.Fprintf(pluginOut, "row %s written %v\n", swap.KeyString(o.Key), o.Written)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(pluginOut, "%d stream instances rebuilt\n", len(rep.Streams))
	return nil
}
