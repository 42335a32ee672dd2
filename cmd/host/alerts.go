package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/alerts"
)

func init() {
	commands = append(commands, command{"alerts",
		"write alerting rules for the projections' freshness objectives: a Prometheus rule file or CloudWatch alarms as a CloudFormation template (alerts --config F --format prometheus|cloudwatch)", runAlerts})
}

// alertsOut is where `host alerts` writes without --out (a variable for
// tests).
var alertsOut io.Writer = os.Stdout

const alertsHelp = `usage: host alerts --config FILE --format prometheus|cloudwatch [--out FILE] [--lag D]

Writes alerting rules for every freshness objective the configuration's
projections declare ("freshness": {"p95": "30s", "p99": "2m"}): for each,
multi-window burn-rate alerts (1h and 5m at 14.4 times the budget, 6h and
30m at 6 times: page; 1d and 2h at 3 times: ticket), plus alerts on the
change feed's iterator age (above the largest threshold, or --lag), records
failing for 15 minutes and records given up.

  --format prometheus   a rule file for the metrics of host run (the
                        freshness histogram dynafold_freshness_seconds and
                        the reader's metrics); load it with rule_files
  --format cloudwatch   a CloudFormation template of CloudWatch alarms on the
                        Lambda handler's embedded-metric-format metrics
                        (namespace dynafold); a SAM template includes it as
                        an AWS::Serverless::Application

Example:

  host alerts --config dynafold.json --format prometheus --out dynafold-rules.yml
  host alerts --config dynafold.json --format cloudwatch --out alarms.json

flags:`

func runAlerts(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("alerts", flag.ContinueOnError)
	fs.SetOutput(alertsOut)
	cfgPath := fs.String("config", "dynafold.json", "configuration file")
	format := fs.String("format", "", "prometheus or cloudwatch")
	out := fs.String("out", "", "file to write (default: standard output)")
	lag := durationFlag(fs, "lag", 0, "iterator age (a `duration`) that alerts (default: the largest objective threshold)")
	fs.Usage = func() {
		fmt.Fprintln(alertsOut, alertsHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := flagsOnly(fs, ""); err != nil {
		return err
	}
	cfg, err := host.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	o := alerts.Options{Source: filepath.Base(*cfgPath), LagThreshold: *lag}
	var b []byte
	switch *format {
	case "prometheus":
		b, err = alerts.Prometheus(cfg.Objectives(), o)
	case "cloudwatch":
		b, err = alerts.CloudWatch(cfg.Objectives(), o)
	case "":
		return fmt.Errorf("--format is required: prometheus (rules for host run's metrics) or cloudwatch (alarms for the Lambda handler)")
	default:
		return fmt.Errorf("--format %q is not a format: use prometheus or cloudwatch", *format)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", *cfgPath, err)
	}
	if *out == "" {
		_, err = alertsOut.Write(b)
		return err
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		return fmt.Errorf("writing the rules: %w", err)
	}
	fmt.Fprintf(alertsOut, "wrote %s (%d objectives, %s)\n", *out, len(cfg.Objectives()), *format)
	return nil
}
