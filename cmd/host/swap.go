package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/plugin/extism/transport"
	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/internal/keys"
)

func init() {
	pluginCommands = append(pluginCommands, command{"rollback",
		"put the previous plugin version back where running hosts pick it up (--s3 s3://BUCKET/KEY, or --file F --archive DIR)", runPluginRollback})
}

func runPluginRollback(ctx context.Context, args []string) error {
	out := stdoutOf(ctx)
	fs := flag.NewFlagSet("plugin rollback", flag.ContinueOnError)
	s3url := fs.String("s3", "", "the plugin object, s3://BUCKET/KEY, in a versioned bucket")
	endpoint := fs.String("endpoint", "", "S3-compatible endpoint (default: AWS)")
	region := fs.String("region", "", "S3 region (default us-east-1)")
	file := fs.String("file", "", "the watched plugin file")
	archive := fs.String("archive", "", "the archive of accepted modules (hotSwap.archive)")
	setUsage(fs, `usage: host plugin rollback (--s3 s3://BUCKET/KEY [--endpoint URL] [--region R] | --file F --archive DIR)

Puts the previous plugin version back where running hosts pick it up: the
previous version of a versioned S3 object, or the archived module before
the one in the watched file.

flags:
`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := flagsOnly(fs, ""); err != nil {
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
		fmt.Fprintf(out, "%s: version %s is current again (new version %s); hosts polling it swap it in\n", *s3url, from, to)
		return nil
	case *file != "" && *archive != "":
		r, err := swap.RollbackFile(*archive, *file)
		if err != nil {
			return err
		}
		if r.Plugin == "" { // archived before the archive recorded versions: ask the module
			if p, _, lerr := transport.LoadFile(ctx, r.File, plugin.Config{PoolSize: 1}); lerr == nil {
				r.Plugin = p.Name()
				p.Close(ctx)
			} else {
				r.Plugin = "the archived module"
			}
		}
		fmt.Fprintf(out, "%s: %s is back (sha256 %.12s, from %s; it replaced sha256 %.12s); hosts watching the file swap it in and log \"plugin rolled back\"\n",
			*file, r.Plugin, r.SHA256, r.File, r.From)
		return nil
	}
	return fmt.Errorf("name the plugin's source: --s3 s3://BUCKET/KEY, or --file F --archive DIR")
}

// rebuildWrittenBy re-derives every row of every stream instance that fed
// a row whose writtenBy attribute names a plugin version: a Scan of the
// read model finds the rows, a Scan of the event store the stream
// instances whose events fold into one of those rows, and each row those
// instances feed is rebuilt by the current plugin from every instance that
// feeds it. It prints each row and what the rebuild did to it, and the
// counts (with asJSON, one JSON object).
func rebuildWrittenBy(ctx context.Context, h *host.Host, cfg *host.Config, proj string, sel host.WrittenBySelection, dry, asJSON bool) error {
	out := stdoutOf(ctx)
	rep, err := h.RebuildWrittenBySelection(ctx, proj, sel, dry)
	warnWrittenBy(ctx, cfg, proj, rep)
	if asJSON {
		if jerr := writeWrittenBy(out, rep, dry); jerr != nil {
			return jerr
		}
		return err
	}
	switch {
	case rep.NotWrittenBy != "":
		fmt.Fprintf(out, "%s of %s not written by %s alone (another version wrote it, or folded on before %s did)\n", plural(rep.Rows, "row"), rep.Table, rep.NotWrittenBy, rep.NotWrittenBy)
	case len(sel.Versions) > 1:
		fmt.Fprintf(out, "%s of %s written by %s (or folded on what one of them wrote)\n", plural(rep.Rows, "row"), rep.Table, rep.WrittenBy)
	default:
		fmt.Fprintf(out, "%s of %s written by %s (or folded on what it wrote)\n", plural(rep.Rows, "row"), rep.Table, rep.WrittenBy)
	}
	for _, id := range rep.Streams {
		if dry {
			fmt.Fprintf(out, "would rebuild %s\n", id)
		}
	}
	for i, o := range rep.Outcomes {
		if o.Err != nil {
			fmt.Fprintf(out, "row %s: failed: %v\n", keys.String(o.Key), o.Err)
			continue
		}
		switch c := rep.Changes[i]; {
		case c == host.RebuildUnchanged && o.Written:
			// rewritten, the same but for who wrote it (and the revision)
			fmt.Fprintf(out, "row %s: %s but for its writer, now the version serving\n", keys.String(o.Key), c)
		default:
			fmt.Fprintf(out, "row %s: %s\n", keys.String(o.Key), c)
		}
	}
	if dry {
		fmt.Fprintf(out, "%s would be rebuilt, %s (dry run: nothing written)\n", plural(len(rep.Streams), "stream instance"), plural(rep.ToRebuild, "row"))
		return err
	}
	fmt.Fprintf(out, "%s rebuilt: %s, %d created, %d changed, %d unchanged, %d removed, %d failed\n",
		plural(len(rep.Streams), "stream instance"), plural(len(rep.Outcomes), "row"), rep.Created, rep.Changed, rep.Unchanged, rep.Removed, rep.Failed)
	return err
}

// warnWrittenBy warns on standard error of a version given to a rebuild by
// plugin version that is likely mistyped (1.0 for 1.0.0): with
// --written-by, one that no row names; with --not-written-by, one that no
// row names as its writer (so every row is rebuilt), or that the workers,
// publishing what they serve, do not serve. It names the versions the rows
// do name.
func warnWrittenBy(ctx context.Context, cfg *host.Config, proj string, rep host.WrittenByReport) {
	w := stderrOf(ctx)
	named := fmt.Sprintf("no row of %s names a writer (`host row --config F --id ID` prints a row with its writtenBy attribute)", rep.Table)
	if len(rep.Writers) > 0 {
		named = fmt.Sprintf("the rows of %s name %s", rep.Table, strings.Join(rep.Writers, ", "))
		if rep.OtherWriters > 0 {
			named += fmt.Sprintf(" and %d other versions", rep.OtherWriters)
		}
	}
	switch {
	case rep.WrittenBy != "" && rep.Rows == 0:
		fmt.Fprintf(w, "host rebuild: WARNING no row was written by %s (nor folded on what it wrote): check the version given; %s\n", rep.WrittenBy, named)
	case rep.NotWrittenBy != "" && rep.NotByRows == 0 && rep.Rows > 0:
		fmt.Fprintf(w, "host rebuild: WARNING no row was written by %s, so every row that names a writer is rebuilt: check the version given (the one serving); %s\n", rep.NotWrittenBy, named)
	}
	if rep.NotWrittenBy == "" {
		return
	}
	serving := servingVersions(ctx, cfg, proj)
	if len(serving) > 0 && !slices.Contains(serving, rep.NotWrittenBy) {
		fmt.Fprintf(w, "host rebuild: WARNING the workers serve %s, not %s: --not-written-by is given the version serving\n", strings.Join(serving, " and "), rep.NotWrittenBy)
	}
}

// writeWrittenBy prints a rebuild by plugin version as one JSON object.
func writeWrittenBy(w io.Writer, rep host.WrittenByReport, dry bool) error {
	type row struct {
		outcomeJSON
		Change host.RebuildChange `json:"change"`
	}
	rows := make([]row, len(rep.Outcomes))
	for i, o := range rep.Outcomes {
		rows[i] = row{outcomeOf(o, nil), rep.Changes[i]}
	}
	return writeJSON(w, map[string]any{
		"table": rep.Table, "writtenBy": rep.WrittenBy, "notWrittenBy": rep.NotWrittenBy, "rowsWrittenBy": rep.Rows, "streams": nonNil(rep.Streams), "writers": nonNil(rep.Writers),
		"toRebuild": rep.ToRebuild, "dryRun": dry, "rows": rows,
		"summary": map[string]int{"created": rep.Created, "changed": rep.Changed, "unchanged": rep.Unchanged, "removed": rep.Removed, "failed": rep.Failed},
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
