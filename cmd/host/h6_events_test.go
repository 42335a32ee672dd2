package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// eventsDoc returns docs/EVENTS.md and the fenced block of the given
// language that follows the heading.
func eventsDoc(t *testing.T, heading, lang string) (doc, block string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "EVENTS.md"))
	require.NoError(t, err)
	doc = string(b)
	_, after, ok := strings.Cut(doc, "\n## "+heading+"\n")
	require.True(t, ok, "docs/EVENTS.md has no section %q", heading)
	_, block, ok = strings.Cut(after, "```"+lang+"\n")
	require.True(t, ok, "section %q has no %s block", heading, lang)
	block, _, ok = strings.Cut(block, "```")
	require.True(t, ok)
	return doc, block
}

// docAttributes returns the attributes of the document's item table and
// which of them it says are optional.
func docAttributes(doc string) (all []string, optional map[string]bool) {
	optional = map[string]bool{}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| (S|N|M|B) \\| .*\\| ([^|]*) \\|$")
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		all = append(all, m[1])
		if note := strings.TrimSpace(m[3]); strings.HasPrefix(note, "optional") || strings.HasPrefix(note, "only with") {
			optional[m[1]] = true
		}
	}
	return all, optional
}

// transactItems converts the document's append.json into the SDK's
// TransactWriteItems, on table.
func transactItems(t *testing.T, block, table string) []types.TransactWriteItem {
	t.Helper()
	var raw []map[string]struct {
		TableName           string
		Key, Item           json.RawMessage
		ConditionExpression string
	}
	require.NoError(t, json.Unmarshal([]byte(block), &raw), block)
	attrs := func(b json.RawMessage) map[string]types.AttributeValue {
		it, err := ddbjson.ItemFromJSON(b)
		require.NoError(t, err)
		m, err := ddbclient.ToAttributeMap(it)
		require.NoError(t, err)
		return m
	}
	var out []types.TransactWriteItem
	for _, r := range raw {
		require.Len(t, r, 1)
		for op, w := range r {
			require.Equal(t, "events", w.TableName, "the example's table")
			switch op {
			case "ConditionCheck":
				out = append(out, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: aws.String(table),
					Key: attrs(w.Key), ConditionExpression: aws.String(w.ConditionExpression)}})
			case "Put":
				out = append(out, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table),
					Item: attrs(w.Item), ConditionExpression: aws.String(w.ConditionExpression)}})
			default:
				t.Fatalf("the example has a %s", op)
			}
		}
	}
	return out
}

// docs/EVENTS.md is the contract of writers that are not this host: its
// key formats address the item `host append` writes, its attribute list is
// exactly that item's (the optional ones aside), and its AWS CLI append,
// sent through the AWS SDK as written there, is an event the host folds,
// whose second sending the version check refuses. The boto3 example writes
// the same attributes.
func TestES6_EventsDocumentIsTheContract(t *testing.T) {
	doc, cli := eventsDoc(t, "An append with the AWS CLI", "json")
	_, py := eventsDoc(t, "An append with boto3", "python")
	cfgPath, env, summaries := orderConfig(t)
	cfg, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	events := cfg.EventStore.Table
	ctx := context.Background()

	// Version 1 by host append: the head the example appends after.
	appendAll(t, cfgPath, []string{"--stream", "Order", "--id", "o-1", "--type", "OrderPlaced", "--data", `{"customer":"ann"}`})
	items := transactItems(t, cli, events)
	require.Len(t, items, 2, "a ConditionCheck on the head, a Put of version 2")
	headKey, err := ddbclient.FromAttributeMap(items[0].ConditionCheck.Key)
	require.NoError(t, err)
	written := env.Get(t, events, headKey)
	require.NotNil(t, written, "the document's key of version 1 %v addresses the item host append wrote", headKey)

	all, optional := docAttributes(doc)
	require.GreaterOrEqual(t, len(all), 9, "the document's attribute table: %v", all)
	var required, got []string
	for _, a := range all {
		if !optional[a] {
			required = append(required, a)
		}
	}
	for a := range written {
		got = append(got, a)
	}
	sort.Strings(required)
	sort.Strings(got)
	assert.Equal(t, required, got, "the document lists exactly the attributes host append writes (optional: %v)", optional)

	// The document's append, through the SDK, as written there.
	_, err = env.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	require.NoError(t, err)
	out := captureStdout(t, func() {
		require.NoError(t, runCatchUp(ctx, []string{"--config", cfgPath, "--id", "o-1"}))
	})
	assert.Contains(t, out, "row pk=OrderSummary#o-1,sk=OrderSummary: applied 2 events, checkpoint 2, written true")
	row := env.Get(t, summaries, abi.Item{"pk": abi.S("OrderSummary#o-1"), "sk": abi.S("OrderSummary")})
	require.NotNil(t, row)
	assert.Equal(t, "ann", row["customer"].Str)
	assert.Equal(t, "1", row["items"].Str)
	assert.Equal(t, "2.5", row["total"].Str, "the example's ItemAdded, folded")

	// Sent again, version 2 exists: the transaction is refused.
	_, err = env.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	var tce *types.TransactionCanceledException
	require.True(t, errors.As(err, &tce), "%v", err)
	require.Len(t, tce.CancellationReasons, 2)
	assert.Equal(t, "ConditionalCheckFailed", aws.ToString(tce.CancellationReasons[1].Code), "the Put of version 2")

	// The boto3 example builds the same item.
	put, err := ddbclient.FromAttributeMap(items[1].Put.Item)
	require.NoError(t, err)
	for a := range put {
		if a != "metadata" { // the CLI example shows the optional metadata; the boto3 one does not
			assert.Contains(t, py, `"`+a+`"`, "the boto3 example writes %s", a)
		}
	}
	for _, want := range []string{`"attribute_exists(pk)"`, `"attribute_not_exists(pk)"`, "TransactItems=items", `.event_1#{version:010d}`, `.lower()`, `"_tag": {"S": event_type}`} {
		assert.Contains(t, py, want)
	}
	// Where Python runs, the boto3 example's append is run with a client
	// that records the transaction: it is the CLI example's, but for the
	// optional metadata and the time.
	if python, err := exec.LookPath("python3"); err == nil {
		code, _, _ := strings.Cut(strings.Replace(py, "import boto3", "", 1), "client = boto3.client")
		script := code + `
import json
class Recorder:
    def transact_write_items(self, TransactItems):
        print(json.dumps(TransactItems))
append(Recorder(), "events", "Order", "o-1", 1, [("ItemAdded", {"sku": {"S": "s-1"}, "price": {"N": "2.5"}})])
`
		pyOut, err := exec.Command(python, "-c", script).CombinedOutput()
		require.NoError(t, err, "%s", pyOut)
		var fromPy, fromCLI []map[string]map[string]any
		require.NoError(t, json.Unmarshal(pyOut, &fromPy), "%s", pyOut)
		require.NoError(t, json.Unmarshal([]byte(cli), &fromCLI))
		for _, tx := range [][]map[string]map[string]any{fromPy, fromCLI} {
			if put, ok := tx[len(tx)-1]["Put"]; ok {
				item := put["Item"].(map[string]any)
				delete(item, "metadata")
				delete(item, "timestamp")
			}
		}
		assert.Equal(t, fromCLI, fromPy, "the boto3 example's transaction")
	}

	// The table's example values are the JSON's.
	for _, v := range []string{put["pk"].Str, put["sk"].Str, put["__edd_e__"].Str} {
		assert.Contains(t, doc, "| `"+v+"` |", "the attribute table shows %s", v)
	}
}
