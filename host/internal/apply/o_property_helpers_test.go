package apply_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/outbox"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/dynamotest"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// effectID names an effect: "<streamId>/<version>.<index>".
func effectID(streamID string, version uint64, index int) string {
	return fmt.Sprintf("%s/%d.%d", streamID, version, index)
}

// effectsOf gives the applied events of the fold-mode sources (order and
// weigh) 0 to 2 effects each, depending on the event (a removal 1 to 3);
// scan (latest mode)
// events carry none, since which of them are applied and which superseded
// depends on how they arrive.
func effectsOf(ev abi.Event) []abi.Value {
	if sourceOf(ev.StreamID) == "scan" {
		return nil
	}
	n := int(ev.Version+uint64(ev.StreamID[1])) % 3
	if ev.Type == "Close" {
		n++ // a tombstone's write commits effects too
	}
	var out []abi.Value
	for i := range n {
		out = append(out, testlogic.EffectOf(ev, i))
	}
	return out
}

// expectedFold folds a row's events epoch by epoch (each epoch's events in
// declaration order: source, stream id, version; epochs in the order they
// were delivered) in one call of the logic with effects, and returns the
// final state and the effects of the applied events, in fold order.
func expectedFold(row string, epochs ...[]abi.Event) (abi.Item, []string) {
	rank := map[string]int{"order": 0, "scan": 1, "weigh": 2}
	req := &abi.EvolveRequest{}
	for _, epoch := range epochs {
		var mine []abi.Event
		for _, ev := range epoch {
			if rowOf(ev) == row {
				mine = append(mine, ev)
			}
		}
		sort.Slice(mine, func(i, j int) bool {
			a, b := mine[i], mine[j]
			if ra, rb := rank[sourceOf(a.StreamID)], rank[sourceOf(b.StreamID)]; ra != rb {
				return ra < rb
			}
			if a.StreamID != b.StreamID {
				return a.StreamID < b.StreamID
			}
			return a.Version < b.Version
		})
		for _, ev := range mine {
			req.Events = append(req.Events, abi.SourcedEvent{Source: sourceOf(ev.StreamID), Event: ev})
		}
	}
	fx := testlogic.WithEffects(&threeSources{}, 0)
	fx.SetOf(effectsOf)
	resp, _ := fx.Evolve(context.Background(), req)
	var ids []string
	for i, d := range resp.Decisions {
		for j := range d.Effects {
			ev := req.Events[i].Event
			ids = append(ids, effectID(ev.StreamID, ev.Version, j))
		}
	}
	return resp.State, ids
}

// recorder is a delivery target that records, per row, the first delivery
// of each effect in the order they happen, and counts every delivery. While
// flaky, a delivery now and then fails, or outlasts the drainer's claim
// (so another drainer takes the effect over meanwhile) before it succeeds.
type recorder struct {
	mu        sync.Mutex
	first     map[string][]string // row name → effect ids, first deliveries in order
	delivered map[string]int      // "<row>:<effect id>" → deliveries
	flaky     bool
	slow      time.Duration // a slow delivery's length: more than the claim
	fails     int
}

func newRecorder(slow time.Duration) *recorder {
	return &recorder{first: map[string][]string{}, delivered: map[string]int{}, flaky: true, slow: slow}
}

func rowName(key abi.Item) string { return strings.TrimPrefix(key["pk"].Str, "Ledger#") }

// Deliver implements deliver.Target.
func (r *recorder) Deliver(ctx context.Context, ef deliver.Effect) error {
	r.mu.Lock()
	flaky := r.flaky
	r.mu.Unlock()
	if flaky {
		switch rand.IntN(6) {
		case 0:
			r.mu.Lock()
			r.fails++
			r.mu.Unlock()
			return errors.New("consumer unavailable")
		case 1:
			select {
			case <-time.After(r.slow + time.Duration(rand.IntN(5))*time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	row, id := rowName(ef.Key), effectID(ef.StreamID, ef.Version, ef.Index)
	if r.delivered[row+":"+id] == 0 {
		r.first[row] = append(r.first[row], id)
	}
	r.delivered[row+":"+id]++
	return nil
}

// drainAfterWrite is the engine's delivery right after a row's write, which
// now and then is abandoned: the call ends before it delivers anything (as
// a process dying right after the write), its context is cancelled before
// the drain, or cancelled during the first delivery (the claim is left
// behind and must expire). Otherwise it drains the row to rec.
func drainAfterWrite(d *outbox.Drainer, rec *recorder, abandoned *[4]int, mu *sync.Mutex) func(context.Context, abi.Item) (int, int) {
	return func(ctx context.Context, key abi.Item) (int, int) {
		mode := rand.IntN(6)
		if mode < 3 {
			mu.Lock()
			abandoned[mode]++
			mu.Unlock()
		}
		target := deliver.Target(rec)
		switch mode {
		case 0:
			return 0, 0
		case 1:
			c, cancel := context.WithCancel(ctx)
			cancel()
			ctx = c
		case 2:
			c, cancel := context.WithCancel(ctx)
			defer cancel()
			ctx = c
			target = deliver.Func(func(ctx context.Context, _ deliver.Effect) error {
				cancel()
				return ctx.Err()
			})
		}
		rep, err := d.Drain(ctx, key, target)
		if err != nil || rep.Undelivered != nil {
			return len(rep.Delivered), 1
		}
		return len(rep.Delivered), 0
	}
}

// committed reads the read-model table's stream and returns, per row name,
// the ids of the effects committed to its outbox in commit order (the
// order of the items' inserts), and the outbox items' sort keys in the same
// order.
func committed(t *testing.T, f *fixture, table string) (ids, sks map[string][]string) {
	t.Helper()
	out, err := f.env.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	require.NoError(t, err)
	arn := out.Table.LatestStreamArn
	require.NotNil(t, arn, "the read-model table has a stream")
	sc := dynamodbstreams.New(dynamodbstreams.Options{Region: "us-east-1", BaseEndpoint: aws.String(f.env.Server.Endpoint()),
		Credentials: credentials.NewStaticCredentialsProvider("any", "any", "")})
	ds, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn})
	require.NoError(t, err)
	str := func(img map[string]stypes.AttributeValue, name string) string {
		switch v := img[name].(type) {
		case *stypes.AttributeValueMemberS:
			return v.Value
		case *stypes.AttributeValueMemberN:
			return v.Value
		}
		return ""
	}
	ids, sks = map[string][]string{}, map[string][]string{}
	for _, sh := range ds.StreamDescription.Shards {
		it, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn, ShardId: sh.ShardId,
			ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
		require.NoError(t, err)
		for iter := it.ShardIterator; iter != nil; {
			recs, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			require.NoError(t, err)
			for _, r := range recs.Records {
				img := r.Dynamodb.NewImage
				if r.EventName != stypes.OperationTypeInsert || str(img, apply.OutboxAttrStreamID) == "" {
					continue
				}
				row := strings.TrimPrefix(str(img, "pk"), "Ledger#")
				id := fmt.Sprintf("%s/%s.%s", str(img, apply.OutboxAttrStreamID), str(img, apply.OutboxAttrVersion), str(img, apply.OutboxAttrIndex))
				ids[row] = append(ids[row], id)
				sks[row] = append(sks[row], str(img, "sk"))
			}
			if len(recs.Records) == 0 {
				break
			}
			iter = recs.NextShardIterator
		}
	}
	return ids, sks
}

// lostResponses is a transport that, now and then, loses the response of a
// write that succeeded: the row (and its outbox items) are committed, and
// the engine sees a server error instead (its retry then finds the write
// done, or the call fails and is delivered again), so the delivery right
// after the write never happens in that call.
type lostResponses struct {
	next http.RoundTripper
	lost atomic.Int64
}

func (l *lostResponses) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	op := req.Header.Get("X-Amz-Target")
	if err != nil || resp.StatusCode != http.StatusOK || rand.IntN(8) != 0 ||
		!(strings.HasSuffix(op, ".TransactWriteItems") || strings.HasSuffix(op, ".PutItem")) {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	l.lost.Add(1)
	body := `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"response lost after the write (injected)"}`
	return &http.Response{StatusCode: 500, Status: "500 Internal Server Error", Request: req,
		Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}}, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body))}, nil
}

// lossyDB is a client of the fixture's server whose writes' responses are
// lost now and then (lostResponses).
func lossyDB(t *testing.T, f *fixture) (*dynamo.DB, *lostResponses) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	l := &lostResponses{next: tr}
	c := dynamotest.ClientAt(t, f.env.Server.Endpoint(), func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: l} })
	return dynamo.New(c), l
}
