package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	dlv "github.com/dynafold/dynafold/host/deliver"
)

func init() {
	commands = append(commands,
		command{"drain", "deliver one row's pending side effects in order (--projection, --row); prints JSON lines", runDrain},
		command{"drain-pending", "deliver the pending side effects of every row, found through the outbox index; prints JSON lines", runDrainPending},
	)
}

// drainFlags are the flags of drain and drain-pending.
type drainFlags struct {
	fs                     *flag.FlagSet
	cfgPath, proj, webhook *string
}

func newDrainFlags(name, about, example string) *drainFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	f := &drainFlags{fs: fs,
		cfgPath: fs.String("config", "dynafold.json", "configuration file"),
		proj:    fs.String("projection", "", "projection name (default: the only one with an outbox)"),
		webhook: fs.String("webhook", "", "deliver to this webhook URL instead of the configured outbox.deliver"),
	}
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: host %s [flags]\n\n%s\n\nexample:\n  %s\n\nEach effect handled is printed as one JSON line:\n  {\"status\":\"delivered\",\"effect\":{...}}\n  {\"status\":\"undelivered\",\"error\":\"...\",\"effect\":{...}}  (it stays first in its row's outbox)\n  {\"status\":\"busy\",\"key\":{...}}  (another drainer is delivering the row's first effect)\n  {\"status\":\"skipped\",\"effect\":{...}}  (drain --skip: removed without delivery)\n\nflags:\n", name, about, example)
		fs.PrintDefaults()
	}
	return f
}

// open builds the host and the target; the projection defaults to the only
// one with an outbox.
func (f *drainFlags) open(ctx context.Context, opts ...host.Option) (*host.Host, dlv.Target, error) {
	cfg, err := host.LoadConfig(*f.cfgPath)
	if err != nil {
		return nil, nil, err
	}
	h, err := host.New(ctx, cfg, opts...)
	if err != nil {
		return nil, nil, err
	}
	var target dlv.Target
	if *f.webhook != "" {
		if target, err = dlv.NewWebhook(*f.webhook, dlv.WebhookOptions{}); err != nil {
			h.Close(ctx)
			return nil, nil, err
		}
	}
	return h, target, nil
}

func runDrain(ctx context.Context, args []string) error {
	err := drainRow(ctx, args)
	var ec *exitCode
	if err == nil || errors.Is(err, flag.ErrHelp) || errors.As(err, &ec) {
		return err
	}
	return &exitCode{drainFailed, err}
}

// drainRow is `host drain`; an error that is no *exitCode is one it could
// not run or finish with.
func drainRow(ctx context.Context, args []string) error {
	f := newDrainFlags("drain", "Delivers the pending side effects of one row of a projection with an outbox, strictly in order, to the configured target (outbox.deliver) or --webhook. It stops at the first effect that cannot be delivered; that effect stays first in the row's outbox.\n\nExit status: 0 when the row's pending effects were delivered, 1 when one was left undelivered, 2 when it could not run or finish.",
		`host drain --config dynafold.json --projection shipments --row 'pk=SHIP#s-1,sk=SUMMARY'`)
	row := f.fs.String("row", "", `the row's key: "name=value,name=value" (string values) or a JSON object such as {"pk":"SHIP#s-1","sk":"SUMMARY"}`)
	skip := f.fs.Int("skip", 0, "first remove this many of the row's pending effects without delivering them, each printed as {\"status\":\"skipped\",...} for you to keep: for an effect its consumer refuses for good, which holds back the row's later effects; then deliver the rest")
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	if err := flagsOnly(f.fs, ""); err != nil {
		return err
	}
	if *skip < 0 {
		return fmt.Errorf("--skip %d: give how many of the row's first pending effects to remove, 1 or more", *skip)
	}
	if *row == "" {
		return fmt.Errorf("--row is required: the key of the row whose effects to deliver, e.g. --row 'pk=SHIP#s-1,sk=SUMMARY'")
	}
	key, err := parseRowKey(*row)
	if err != nil {
		return err
	}
	h, target, err := f.open(ctx, host.WithPendingDelivery(host.PendingByNextDrain))
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	proj, err := outboxProjection(h, *f.proj)
	if err != nil {
		return err
	}
	if *skip > 0 {
		rep, err := h.SkipEffects(ctx, proj, key, *skip)
		for _, e := range rep.Delivered {
			if perr := printLine(os.Stdout, map[string]any{"status": "skipped", "effect": e}); perr != nil {
				return perr
			}
		}
		if err != nil {
			return err
		}
		if rep.Busy {
			return fmt.Errorf("skipped %s; the row's next effect is being delivered by another drainer (host run): run this again once it is done", plural(len(rep.Delivered), "effect"))
		}
	}
	rep, err := h.Drain(ctx, proj, key, target)
	if perr := printDrain(os.Stdout, rep); perr != nil {
		return perr
	}
	if err == nil && rep.Undelivered != nil {
		// as drain-pending: a script sees the effect left
		return &exitCode{drainLeftUndelivered, fmt.Errorf("the row's next effect was left undelivered (the \"undelivered\" line says why): it stays first in the row's outbox, holding back its later effects; run this again once the target takes it")}
	}
	return err
}

// The exit status of drain-pending: 0 when every pending effect it found
// was delivered (or is being delivered by another drainer), 1 when any was
// left undelivered, 2 when it could not run or finish (a flag, the
// configuration, DynamoDB).
const (
	drainLeftUndelivered = 1
	drainFailed          = 2
)

func runDrainPending(ctx context.Context, args []string) error {
	f := newDrainFlags("drain-pending", "Finds every row with pending side effects through the outbox's index (outbox.index) and delivers each row's effects in order, to the configured target (outbox.deliver) or --webhook: for rows that get no more events after a crash or a failed delivery. A running `host run` sweeps these on its own every outbox.claimFor; this command delivers them now, and where no `host run` runs (a Lambda function only) it is the sweep: run it on a schedule. Without --projection, every projection with an outbox.\n\nExit status: 0 when every pending effect found was delivered (or another drainer is delivering it), 1 when any was left undelivered (each stays first in its row's outbox for the next run; the last line says how many), 2 when it could not run or finish (flags, configuration, DynamoDB).",
		`host drain-pending --config dynafold.json --projection shipments`)
	if err := f.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitCode{drainFailed, err}
	}
	if err := flagsOnly(f.fs, ""); err != nil {
		return &exitCode{drainFailed, err}
	}
	h, target, err := f.open(ctx, host.WithPendingDelivery(host.PendingByNextDrain))
	if err != nil {
		return &exitCode{drainFailed, err}
	}
	defer h.Close(ctx)
	projs := h.OutboxProjections()
	if *f.proj != "" {
		projs = []string{*f.proj}
	}
	if len(projs) == 0 {
		return &exitCode{drainFailed, fmt.Errorf("no projection has an outbox: configure a projection's outbox first")}
	}
	var errs []error
	left := 0 // effects left undelivered: at most one per row, its first
	for _, p := range projs {
		reps, err := h.DrainPending(ctx, p, target)
		for _, rep := range reps {
			if perr := printDrain(os.Stdout, rep); perr != nil {
				return &exitCode{drainFailed, perr}
			}
			if rep.Undelivered != nil {
				left++
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("projection %s: %w", p, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		if left > 0 {
			err = fmt.Errorf("%w\n%s", err, undeliveredText(left))
		}
		return &exitCode{drainFailed, err}
	}
	if left > 0 {
		return &exitCode{drainLeftUndelivered, errors.New(undeliveredText(left))}
	}
	return nil
}

// undeliveredText says how many effects drain-pending left undelivered and
// what happens to them.
func undeliveredText(n int) string {
	return fmt.Sprintf("%s left undelivered (see the \"undelivered\" lines for why): each stays first in its row's outbox, "+
		"holding back that row's later effects, for the next `host drain-pending` run (or `host run`'s sweep) to deliver once the target takes it",
		plural(n, "effect"))
}

// outboxProjection returns name, or the only projection with an outbox.
func outboxProjection(h *host.Host, name string) (string, error) {
	if name != "" {
		return name, nil
	}
	ps := h.OutboxProjections()
	switch len(ps) {
	case 0:
		return "", fmt.Errorf("no projection of the configuration has an outbox, so there are no effects to deliver: add \"outbox\" to the projection that returns effects (docs/OUTBOX.md)")
	case 1:
	default:
		return "", fmt.Errorf("--projection is required: the projections with an outbox are %s", strings.Join(ps, ", "))
	}
	return ps[0], nil
}

// parseRowKey reads "name=value,name=value" or a JSON object of strings.
func parseRowKey(s string) (abi.Item, error) {
	key := abi.Item{}
	if strings.HasPrefix(strings.TrimSpace(s), "{") {
		var m map[string]string
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			return nil, fmt.Errorf("--row %s: not a JSON object of strings: %w", s, err)
		}
		for k, v := range m {
			key[k] = abi.S(v)
		}
	} else {
		for _, part := range strings.Split(s, ",") {
			k, v, ok := strings.Cut(part, "=")
			if !ok || k == "" || v == "" {
				return nil, fmt.Errorf("--row %q: want name=value pairs joined with commas, such as pk=SHIP#s-1,sk=SUMMARY (a value holding a comma: use the JSON form)", s)
			}
			key[k] = abi.S(v)
		}
	}
	if len(key) == 0 {
		return nil, fmt.Errorf("--row %q names no key attribute", s)
	}
	return key, nil
}

// printDrain writes one JSON line per effect a drain handled.
// printLine prints v as one JSON line.
func printLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

func printDrain(w io.Writer, rep host.DrainReport) error {
	line := func(v any) error { return printLine(w, v) }
	for _, e := range rep.Delivered {
		if err := line(map[string]any{"status": "delivered", "effect": e}); err != nil {
			return err
		}
	}
	if u := rep.Undelivered; u != nil {
		if err := line(map[string]any{"status": "undelivered", "error": fmt.Sprint(rep.Err), "effect": *u}); err != nil {
			return err
		}
	}
	if rep.Busy {
		k := map[string]string{}
		for n, v := range rep.Key {
			k[n] = v.Str
		}
		return line(map[string]any{"status": "busy", "key": k})
	}
	return nil
}
