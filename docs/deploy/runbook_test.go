package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// section returns the part of a Markdown file from the heading to the next
// heading of its level or above.
func section(t *testing.T, path, heading string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("%s has no %q section", path, heading)
	}
	s = s[i+1:]
	level := heading[:strings.Index(heading, " ")+1]
	for h := "## "; len(h) <= len(level); h = "#" + h {
		if j := strings.Index(s[len(heading):], "\n"+h); j >= 0 {
			s = s[:j+len(heading)]
		}
	}
	return s
}

var hostCommand = regexp.MustCompile("host ([a-z][a-z-]*)([^`\\n]*)")
var longFlag = regexp.MustCompile(`(?:^|\s)--([a-z][a-z-]*)`)

// TestX4_LambdaFailureRunbookUsesRealFlags checks the runbook for a batch
// in the event source mapping's failure queue: it reads the fields the
// OnFailure message has, finds the stream ids of the batch and brings
// their rows up, and every host command and flag it writes is one `host
// help` lists. The deployment README points to it from the mapping's
// OnFailure setting.
func TestX4_LambdaFailureRunbookUsesRealFlags(t *testing.T) {
	sec := section(t, "../operations.md", "### Lambda: a batch in the failure queue")
	for _, w := range []string{"DDBStreamBatchInfo", "`shardId`", "`startSequenceNumber`", "`endSequenceNumber`", "`streamArn`",
		"--shard-iterator-type AT_SEQUENCE_NUMBER", "aws dynamodbstreams get-records", "host catchup --config dynafold.json --id",
		"host verify", "host capture --config", "--from-stream"} {
		if !strings.Contains(sec, w) {
			t.Errorf("the runbook does not say %q", w)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "(../operations.md#lambda-a-batch-in-the-failure-queue)") {
		t.Errorf("README.md does not link the failure runbook")
	}

	if testing.Short() {
		t.Skip("builds the host binary")
	}
	bin := filepath.Join(t.TempDir(), "host")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/host")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/host: %v\n%s", err, out)
	}
	flags := map[string]map[string]bool{}
	uses := hostCommand.FindAllStringSubmatch(sec, -1)
	if len(uses) == 0 {
		t.Fatal("the runbook runs no host command")
	}
	for _, m := range uses {
		cmd := m[1]
		if flags[cmd] == nil {
			out, err := exec.Command(bin, "help", cmd).CombinedOutput()
			if err != nil {
				t.Errorf("the runbook runs `host %s`, and `host help %s` fails: %v\n%s", cmd, cmd, err, out)
				continue
			}
			flags[cmd] = map[string]bool{}
			for _, line := range strings.Split(string(out), "\n") {
				if f, ok := strings.CutPrefix(strings.TrimSpace(line), "-"); ok && f != "" {
					flags[cmd][strings.Fields(f)[0]] = true
				}
			}
		}
		for _, f := range longFlag.FindAllStringSubmatch(m[2], -1) {
			if !flags[cmd][f[1]] {
				t.Errorf("the runbook gives `host %s` the flag --%s, which `host help %s` does not list", cmd, f[1], cmd)
			}
		}
	}
}
