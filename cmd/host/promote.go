package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/swap"
)

func init() {
	pluginCommands = append(pluginCommands, command{"promote",
		"make a projection's shadow plugin the live one, through the hot-swap checks (--config F --projection P)", runPluginPromote})
}

func runPluginPromote(ctx context.Context, args []string) error {
	out := stdoutOf(ctx)
	fs := flag.NewFlagSet("plugin promote", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `usage: host plugin promote --config FILE [--projection P]

Runs the projection's shadow plugin through the hot-swap checks (pins, ABI,
compatibility, smoke test) and, when it passes, puts it where the running
hosts load the live plugin from: the S3 object of hotSwap.s3, else the
projection's plugin file (a watched file is swapped in by the hosts
watching it; otherwise hosts load it when they start). The projection must
have "shadow" and "hotSwap" configured. Afterwards, remove "shadow" from
the configuration.

example:
  host plugin promote --config dynafold.json --projection summaries

flags:`)
		fs.PrintDefaults()
	}
	cfgPath := fs.String("config", "dynafold.json", "configuration file")
	proj := fs.String("projection", "", "projection name (default: the only one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := flagsOnly(fs, ""); err != nil {
		return err
	}
	f := &projectionFlags{cfgPath: cfgPath, proj: proj, id: new(string)}
	h, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	path, ok := h.ShadowModule(*proj)
	if !ok {
		return fmt.Errorf("%w: add \"shadow\": {\"plugin\": FILE} to projection %q", host.ErrNoShadow, *proj)
	}
	info, err := h.Promote(ctx, *proj)
	if err != nil {
		return err
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	cfg, err := host.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	var pc host.ProjectionConfig
	for _, p := range cfg.Projections {
		if p.Name == *proj {
			pc = p
		}
	}
	where, err := publish(ctx, pc, filepath.Dir(*cfgPath), wasm)
	if err != nil {
		return fmt.Errorf("%s passed the checks but could not be published: %w", info.Plugin, err)
	}
	fmt.Fprintf(out, "projection %s: %s (sha256 %s) passed the checks and was written to %s\n", *proj, info.Plugin, info.SHA256, where)
	fmt.Fprintln(out, "hosts following that source swap it in; remove \"shadow\" from the projection's configuration")
	return nil
}

// publish puts the promoted module where the projection's hosts load the
// live plugin from and returns that place.
func publish(ctx context.Context, pc host.ProjectionConfig, dir string, wasm []byte) (string, error) {
	if hs := pc.HotSwap; hs != nil && hs.S3 != nil {
		client, err := swap.NewS3Client(ctx, hs.S3.Endpoint, hs.S3.Region)
		if err != nil {
			return "", err
		}
		if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(hs.S3.Bucket), Key: aws.String(hs.S3.Key),
			Body: bytes.NewReader(wasm)}); err != nil {
			return "", err
		}
		return "s3://" + hs.S3.Bucket + "/" + hs.S3.Key, nil
	}
	path := pc.Plugin
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".promote")
	if err := os.WriteFile(tmp, wasm, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil { // a watcher never sees half a module
		os.Remove(tmp)
		return "", err
	}
	return path, nil
}
