package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestH1_InitFailureUnderRuntimeInterfaceEmulator starts the function with a
// configuration that cannot be read: the init fails with a JSON log line
// naming the problem, and the invocation fails instead of answering.
func TestH1_InitFailureUnderRuntimeInterfaceEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("builds bootstrap and the emulator")
	}
	riePath := emulator(t)
	bootstrap := buildBootstrap(t)
	taskRoot := t.TempDir()
	fn := startRIE(t, riePath, bootstrap, taskRoot, map[string]string{
		"DYNAFOLD_CONFIG":       filepath.Join(taskRoot, "missing.json"),
		"AWS_REGION":            "us-east-1",
		"AWS_ACCESS_KEY_ID":     "dummy",
		"AWS_SECRET_ACCESS_KEY": "dummy",
	})
	url := "http://" + fn.addr + "/2015-03-31/functions/function/invocations"
	resp, err := http.Post(url, "application/json", bytes.NewReader(readFixture(t, "stream_event.json")))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK && strings.Contains(string(body), "batchItemFailures") {
		t.Fatalf("invocation answered %s despite the failed init", body)
	}
	t.Logf("invocation after a failed init: HTTP %d %s", resp.StatusCode, body)
	deadline := time.Now().Add(time.Minute)
	for {
		for _, line := range strings.Split(fn.out.String(), "\n") {
			var l struct{ Level, Msg, Err string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "init failed" {
				if l.Level != "ERROR" || !strings.Contains(l.Err, "missing.json") || !strings.Contains(l.Err, "DYNAFOLD_CONFIG") {
					t.Errorf("init failure logged as %+v, want an ERROR naming the file and DYNAFOLD_CONFIG", l)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no JSON \"init failed\" log line:\n%s", fn.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
