package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	dlv "github.com/dynafold/dynafold/host/deliver"
)

func TestO2_DrainCommandReadsRowKeys(t *testing.T) {
	want := abi.Item{"pk": abi.S("SHIP#s-1"), "sk": abi.S("SUMMARY")}
	for _, in := range []string{"pk=SHIP#s-1,sk=SUMMARY", `{"pk":"SHIP#s-1","sk":"SUMMARY"}`} {
		got, err := parseRowKey(in)
		if err != nil || len(got) != 2 || got["pk"].Str != want["pk"].Str || got["sk"].Str != want["sk"].Str {
			t.Errorf("parseRowKey(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := parseRowKey("pk"); err == nil || !strings.Contains(err.Error(), "name=value") {
		t.Errorf("parseRowKey(pk): %v", err)
	}
}

func TestO2_DrainCommandsPrintJSONLinesAndHelp(t *testing.T) {
	var out bytes.Buffer
	e := dlv.Effect{Stream: "Order", StreamID: "o-1", Version: 3, Key: abi.Item{"pk": abi.S("a")}, Value: abi.S("x")}
	if err := printDrain(&out, host.DrainReport{Delivered: []dlv.Effect{e}, Undelivered: &e, Err: context.Canceled}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"effect":{"idempotencyKey"`) || !strings.Contains(lines[0], `"status":"delivered"`) ||
		!strings.Contains(lines[1], `"status":"undelivered"`) || !strings.Contains(lines[1], `"error":"context canceled"`) {
		t.Errorf("printed %q", out.String())
	}
	for _, cmd := range []string{"drain", "drain-pending"} {
		var o, e bytes.Buffer
		if code := run(context.Background(), []string{"help", cmd}, &o, &e); code != 0 {
			t.Errorf("host help %s: exit %d", cmd, code)
		}
	}
}
