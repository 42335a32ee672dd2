package ddblocal

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/aws/smithy-go"
)

// histEntry is one write to one item: its token ("P:<w>" for a put or
// update that sets attribute w, "D" for a delete), and whether the server
// acknowledged it (false: the process was killed while it was in flight).
type histEntry struct {
	token string
	acked bool
}

// model is what the parent knows of every item's writes.
type model struct {
	mu     sync.Mutex
	items  map[string][]histEntry
	txs    [][2]string // pairs of {item/token} written by one unacknowledged transaction
	acked  int
	failed int
}

func (m *model) add(item, token string, acked bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.items[item] = append(m.items[item], histEntry{token, acked})
	if acked {
		m.acked++
	} else {
		m.failed++
	}
}

func (m *model) ackedCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.acked
}

// waitAcked waits until more than n writes were acknowledged, for at most
// d, and reports whether they were.
func (m *model) waitAcked(n int, d time.Duration) bool {
	for deadline := time.Now().Add(d); m.ackedCount() <= n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// lastAckedPut reports whether the item's last write is an acknowledged put
// (so the item exists for sure and a delete changes it).
func (m *model) lastAckedPut(item string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.items[item]
	return len(h) > 0 && h[len(h)-1].acked && strings.HasPrefix(h[len(h)-1].token, "P:")
}

// TestDurability_KillAtRandomPointsLosesNoStreamRecord kills a persistent
// ddblocal with SIGKILL at random points while writers drive PutItem,
// UpdateItem, DeleteItem, BatchWriteItem and TransactWriteItems through the
// SDK, restarts it on the same file and checks that every acknowledged write
// is in the table and exactly once in the stream, in write order per item;
// an unacknowledged write may be there or not, but a write in the table is in
// the stream exactly once, and a transaction is all there or not at all. The
// stream has the default four shards.
func TestDurability_KillAtRandomPointsLosesNoStreamRecord(t *testing.T) {
	runDurability(t, durabilityCase{cycles: 220})
}

// TestY8_KillWithoutSyncLosesNoAcknowledgedWrite: with Options.NoSync the
// store skips its file syncs, and a write acknowledged before a SIGKILL of
// the process is still there, exactly once in the stream, after a restart
// (the operating system's cache holds it; only the machine's crash could
// lose it, which no test here can cause).
func TestY8_KillWithoutSyncLosesNoAcknowledgedWrite(t *testing.T) {
	runDurability(t, durabilityCase{cycles: 60, noSync: true})
}

// durabilityCase is one kill-at-random-points run.
type durabilityCase struct {
	cycles int
	// splits makes the child split shards by itself and at random, roll
	// them over by age, and a lineage-aware reader follow the stream
	// through the kills (durability_shards_test.go).
	splits bool
	// kinesis streams the table to a Kinesis stream too, which the child
	// splits and merges at random, and checks that stream as the DynamoDB
	// one (durability_kinesis_test.go).
	kinesis bool
	// writers is the number of concurrent writers (default 4).
	writers int
	// noSync runs the child with Options.NoSync.
	noSync bool
	// checkpointEvery makes the child checkpoint its log every that many
	// logged commits (0: the default thresholds).
	checkpointEvery int
}

// durabilityResult is what the last check of a case listed: the table's
// stream's shards and, with Kinesis, the Kinesis stream's.
type durabilityResult struct {
	shards        []stypes.Shard
	kinesisShards []ktypes.Shard
}

// runDurability runs a case and returns what its last check listed.
//
// The case runs in parallel with the other kill-at-random-points cases (at
// most -test.parallel at once, GOMAXPROCS by default): most of a case's
// time is waiting (a child starting, a write's sync, the random delay
// before a kill), and each case shares nothing with the others: its own
// data directory, child process, port, seed, model and clients.
func runDurability(t *testing.T, dc durabilityCase) durabilityResult {
	if testing.Short() {
		t.Skip("kills a child process 100+ times")
	}
	t.Parallel()
	seed := uint64(20250609)
	if v := os.Getenv(durabilitySeedEnv); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", durabilitySeedEnv, v, err)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d (kill timings also depend on scheduling; rerun with %s=%d)", seed, durabilitySeedEnv, seed)
		}
	})
	writers := dc.writers
	if writers == 0 {
		writers = 4
	}
	const (
		itemsPer    = 3
		verifyEvery = 20
	)
	cycles := dc.cycles
	window := 40_000 // µs of writing before a kill, at most
	var env []string
	var lr *liveReader
	if dc.splits {
		env = []string{durabilitySplitsEnv + "=1"}
		lr = newLiveReader()
		window = 80_000 // the reader takes its share of the child's time
	}
	if dc.kinesis {
		env = append(env, durabilityKinesisEnv+"=1")
	}
	if dc.noSync {
		env = append(env, durabilityNoSyncEnv+"=1")
	}
	if dc.checkpointEvery > 0 {
		env = append(env, fmt.Sprintf("%s=%d", durabilityCheckpointEnv, dc.checkpointEvery))
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	dir := t.TempDir()
	m := &model{items: map[string][]histEntry{}}

	// The first run creates the table.
	c := startChild(t, dir, env...)
	ep := c.wait(t)
	db, _ := durabilityClients(ep)
	ctx := ctxT(t)
	if _, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String("dur"),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		StreamSpecification:  &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
	}); err != nil {
		c.kill()
		t.Fatalf("CreateTable: %v", err)
	}
	if dc.kinesis {
		setupKinesisDestination(t, ep, c)
	}
	c.kill()

	start := time.Now()
	earlyKills, waited := 0, 0
	for cycle := 0; cycle < cycles; cycle++ {
		c := startChild(t, dir, env...)
		if rng.IntN(8) == 0 {
			// Kill while the child opens the store and loads it.
			time.Sleep(time.Duration(rng.IntN(15_000)) * time.Microsecond)
			c.kill()
			earlyKills++
			continue
		}
		ep := c.wait(t)
		db, sc := durabilityClients(ep)
		if cycle%verifyEvery == 0 {
			vdb, vsc := verifyClients(ep)
			verifyDurability(t, m, vdb, vsc, cycle, lr, kinesisVerifier(dc, ep))
			if t.Failed() {
				c.kill()
				return durabilityResult{}
			}
		}
		ackedBefore := m.ackedCount()
		var wg sync.WaitGroup
		for g := range writers {
			wseed := rng.Uint64()
			wg.Add(1)
			go func() {
				defer wg.Done()
				runWriter(t, m, db, rand.New(rand.NewPCG(wseed, uint64(g))), cycle, g, itemsPer)
			}()
		}
		if lr != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lr.follow(sc) // until the kill
			}()
		}
		if rng.IntN(4) != 0 {
			// Most kills come after the cycle's first acknowledged write,
			// so that a loaded machine, where the first write can take
			// longer than the whole window, still exercises the server;
			// the others come at any point, before the first write too.
			waited++
			if !m.waitAcked(ackedBefore, time.Minute) {
				c.kill()
				wg.Wait()
				t.Fatalf("cycle %d: no write acknowledged within a minute of the child serving; stderr:\n%s", cycle, c.stderr.String())
			}
		}
		time.Sleep(time.Duration(1000+rng.IntN(window)) * time.Microsecond)
		c.kill()
		wg.Wait()
	}
	c = startChild(t, dir, env...)
	ep = c.wait(t)
	vdb, vsc := verifyClients(ep)
	res := verifyDurability(t, m, vdb, vsc, cycles, lr, kinesisVerifier(dc, ep))
	c.kill()
	t.Logf("%d kill points (%d while starting, %d after a cycle's first acknowledged write), %d acknowledged writes, %d in flight at a kill, %d unacknowledged transactions, in %v",
		cycles+1, earlyKills, waited, m.acked, m.failed, len(m.txs), time.Since(start).Round(time.Millisecond))
	if lr != nil {
		t.Logf("the live reader read %d records and finished %d shards", len(lr.seen), len(lr.finished))
	}
	// Every cycle that waited for a write saw one acknowledged (else it
	// failed above): the writes, not the machine's speed, set how much the
	// kills exercised. The draw gives a wait to about two cycles in three.
	if waited < cycles/2 {
		t.Errorf("only %d of %d cycles killed the child after an acknowledged write: the test did not exercise the server", waited, cycles)
	}
	// The children ran with the current store options: the file's freelist
	// is not stored but rebuilt at every restart after a kill.
	if storedFreelist(t, dir) {
		t.Errorf("the data file stores its freelist: the kills did not exercise the freelist rebuilt at open")
	}
	return res
}

// runWriter writes to its own items until a write fails (the child was
// killed). Each write has a unique token, so a record found twice, or a
// record of an acknowledged write missing, shows in verifyDurability.
func runWriter(t *testing.T, m *model, db *dynamodb.Client, rng *rand.Rand, cycle, g, itemsPer int) {
	ctx := context.Background()
	item := func() string { return fmt.Sprintf("g%d-%d", g, rng.IntN(itemsPer)) }
	for k := 0; ; k++ {
		w := fmt.Sprintf("c%dg%dn%d", cycle, g, k)
		var err error
		switch op := rng.IntN(10); {
		case op < 3:
			it := item()
			_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("dur"),
				Item: map[string]types.AttributeValue{"pk": s(it), "w": s(w), "pad": s(strings.Repeat("x", rng.IntN(2000)))}})
			m.add(it, "P:"+w, err == nil)
		case op < 5:
			it := item()
			_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("dur"),
				Key:              map[string]types.AttributeValue{"pk": s(it)},
				UpdateExpression: aws.String("SET w = :w ADD n :one"), ExpressionAttributeValues: map[string]types.AttributeValue{":w": s(w), ":one": n("1")}})
			m.add(it, "P:"+w, err == nil)
		case op < 7:
			it := item()
			if !m.lastAckedPut(it) {
				continue
			}
			_, err = db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("dur"), Key: map[string]types.AttributeValue{"pk": s(it)}})
			m.add(it, "D", err == nil)
		case op < 9:
			ai := rng.IntN(itemsPer)
			a, b := fmt.Sprintf("g%d-%d", g, ai), fmt.Sprintf("g%d-%d", g, (ai+1+rng.IntN(itemsPer-1))%itemsPer)
			_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: aws.String("dur"), Item: map[string]types.AttributeValue{"pk": s(a), "w": s(w + "a")}}},
				{Update: &types.Update{TableName: aws.String("dur"), Key: map[string]types.AttributeValue{"pk": s(b)},
					UpdateExpression: aws.String("SET w = :w"), ExpressionAttributeValues: map[string]types.AttributeValue{":w": s(w + "b")}}},
			}})
			m.add(a, "P:"+w+"a", err == nil)
			m.add(b, "P:"+w+"b", err == nil)
			if err != nil {
				m.mu.Lock()
				m.txs = append(m.txs, [2]string{a + "/P:" + w + "a", b + "/P:" + w + "b"})
				m.mu.Unlock()
			}
		default:
			a := fmt.Sprintf("g%d-%d", g, rng.IntN(itemsPer))
			var out *dynamodb.BatchWriteItemOutput
			out, err = db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"dur": {
				{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{"pk": s(a), "w": s(w)}}},
			}}})
			if err == nil && len(out.UnprocessedItems) > 0 {
				t.Errorf("BatchWriteItem left %d tables unprocessed without faults configured", len(out.UnprocessedItems))
			}
			m.add(a, "P:"+w, err == nil)
		}
		if err != nil {
			var ae smithy.APIError
			if errors.As(err, &ae) {
				t.Errorf("writer %d: the server refused a write with %s: %v (only connection errors are expected, at a kill)", g, ae.ErrorCode(), err)
			}
			return
		}
	}
}

type streamRec struct {
	seq   *big.Int
	item  string
	token string
}

// streamRecOf is what the test keeps of a stream record.
func streamRecOf(r stypes.Record) (streamRec, error) {
	seq, ok := new(big.Int).SetString(aws.ToString(r.Dynamodb.SequenceNumber), 10)
	if !ok {
		return streamRec{}, fmt.Errorf("record with sequence number %q", aws.ToString(r.Dynamodb.SequenceNumber))
	}
	pk, _ := r.Dynamodb.Keys["pk"].(*stypes.AttributeValueMemberS)
	if pk == nil {
		return streamRec{}, fmt.Errorf("record %s has no pk key", seq)
	}
	rec := streamRec{seq: seq, item: pk.Value}
	switch r.EventName {
	case stypes.OperationTypeRemove:
		rec.token = "D"
	default:
		w, _ := r.Dynamodb.NewImage["w"].(*stypes.AttributeValueMemberS)
		if w == nil {
			return streamRec{}, fmt.Errorf("%s record %s of %s has no NewImage.w", r.EventName, seq, pk.Value)
		}
		rec.token = "P:" + w.Value
	}
	return rec, nil
}

// readWholeStream reads every record of the table's stream through the
// DynamoDB Streams API, ordered by sequence number.
func readWholeStream(ctx context.Context, db *dynamodb.Client, sc *dynamodbstreams.Client) ([]streamRec, []stypes.Shard, error) {
	ls, err := sc.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String("dur")})
	if err != nil {
		return nil, nil, fmt.Errorf("ListStreams: %w", err)
	}
	if len(ls.Streams) != 1 {
		return nil, nil, fmt.Errorf("ListStreams: %d streams for table dur, want 1", len(ls.Streams))
	}
	arn := ls.Streams[0].StreamArn
	var shards []stypes.Shard
	var last *string
	for {
		ds, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn, ExclusiveStartShardId: last})
		if err != nil {
			return nil, nil, fmt.Errorf("DescribeStream: %w", err)
		}
		shards = append(shards, ds.StreamDescription.Shards...)
		if last = ds.StreamDescription.LastEvaluatedShardId; last == nil {
			break
		}
	}
	var out []streamRec
	for _, sh := range shards {
		gi, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn, ShardId: sh.ShardId, ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			return nil, nil, fmt.Errorf("GetShardIterator %s: %w", aws.ToString(sh.ShardId), err)
		}
		for iter := gi.ShardIterator; iter != nil; {
			gr, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			if err != nil {
				return nil, nil, fmt.Errorf("GetRecords %s: %w", aws.ToString(sh.ShardId), err)
			}
			for _, r := range gr.Records {
				rec, err := streamRecOf(r)
				if err != nil {
					return nil, nil, err
				}
				out = append(out, rec)
			}
			if len(gr.Records) == 0 {
				break
			}
			iter = gr.NextShardIterator
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq.Cmp(out[j].seq) < 0 })
	return out, shards, nil
}

// verifyDurability checks the table and its stream against the model, and
// returns the shards it listed.
// With a live reader, it also checks what that reader saw survived: every
// shard it finished is still closed at the same end, and every record it
// read is still there. With kc, the table's Kinesis stream is checked as
// its DynamoDB stream is.
func verifyDurability(t *testing.T, m *model, db *dynamodb.Client, sc *dynamodbstreams.Client, cycle int, lr *liveReader, kc *kinesis.Client) durabilityResult {
	t.Helper()
	ctx := ctxT(t)
	recs, shards, err := readWholeStream(ctx, db, sc)
	if err != nil {
		t.Fatalf("cycle %d: reading the stream: %v", cycle, err)
	}
	if lr != nil {
		lr.check(t, cycle, recs, shards)
	}
	table := map[string]string{}
	var startKey map[string]types.AttributeValue
	for {
		out, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("dur"), ConsistentRead: aws.Bool(true), ExclusiveStartKey: startKey})
		if err != nil {
			t.Fatalf("cycle %d: Scan: %v", cycle, err)
		}
		for _, it := range out.Items {
			pk := it["pk"].(*types.AttributeValueMemberS).Value
			w, _ := it["w"].(*types.AttributeValueMemberS)
			if w == nil {
				t.Errorf("cycle %d: item %s in the table has no w", cycle, pk)
				continue
			}
			table[pk] = w.Value
		}
		if startKey = out.LastEvaluatedKey; len(startKey) == 0 {
			break
		}
	}
	checkRecords(t, m, table, recs, cycle, "stream")
	if kc != nil {
		krecs, kshards, err := readWholeKinesis(ctx, kc)
		if err != nil {
			t.Fatalf("cycle %d: reading the Kinesis stream: %v", cycle, err)
		}
		checkRecords(t, m, table, krecs, cycle, "Kinesis stream")
		return durabilityResult{shards: shards, kinesisShards: kshards}
	}
	return durabilityResult{shards: shards}
}

// checkRecords checks the records of a stream (what names it in
// messages) against the model and the table: every acknowledged write
// exactly once, in order per item, nothing else, the table as the last
// record of each item says, transactions whole.
func checkRecords(t *testing.T, m *model, table map[string]string, recs []streamRec, cycle int, what string) {
	t.Helper()
	perItem := map[string][]string{}
	for i, r := range recs {
		if i > 0 && r.seq.Cmp(recs[i-1].seq) == 0 {
			t.Errorf("cycle %d: %s: two records with sequence number %s", cycle, what, r.seq)
		}
		perItem[r.item] = append(perItem[r.item], r.token)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	present := map[string]bool{}
	for it := range perItem {
		if _, ok := m.items[it]; !ok {
			t.Errorf("cycle %d: the %s has records of item %s, never written", cycle, what, it)
		}
	}
	for it, hist := range m.items {
		got := perItem[it]
		j := 0
		for _, h := range hist {
			switch {
			case j < len(got) && got[j] == h.token:
				present[it+"/"+h.token] = true
				j++
			case h.acked:
				t.Errorf("cycle %d: item %s: the acknowledged write %s is not in the %s where expected (records %v, history %v)", cycle, it, h.token, what, got, hist)
				return
			}
		}
		if j != len(got) {
			t.Errorf("cycle %d: item %s: the %s has records no write explains, or a record twice: %v (history %v)", cycle, it, what, got[j:], hist)
			continue
		}
		want := ""
		if len(got) > 0 && got[len(got)-1] != "D" {
			want = strings.TrimPrefix(got[len(got)-1], "P:")
		}
		if table[it] != want {
			t.Errorf("cycle %d: item %s: the table holds w=%q but the %s's last record says %q (a write in the table without its record, or the reverse)", cycle, it, table[it], what, want)
		}
	}
	for it := range table {
		if _, ok := m.items[it]; !ok && what == "stream" {
			t.Errorf("cycle %d: the table holds item %s, never written", cycle, it)
		}
	}
	for _, tx := range m.txs {
		if present[tx[0]] != present[tx[1]] {
			t.Errorf("cycle %d: %s: transaction half applied: %s present=%v, %s present=%v", cycle, what, tx[0], present[tx[0]], tx[1], present[tx[1]])
		}
	}
}

// TestY8_NoSyncIsTheStoresSettingAndACleanStopKeepsWrites: Options.NoSync
// reaches the store (and only with it), and writes acknowledged before a
// clean Close are there when the data directory is opened again.
func TestY8_NoSyncIsTheStoresSettingAndACleanStopKeepsWrites(t *testing.T) {
	dir := t.TempDir()
	for _, noSync := range []bool{true, false} {
		srv, err := Start(context.Background(), Options{DataDir: dir, TTLInterval: -1, NoSync: noSync})
		if err != nil {
			t.Fatal(err)
		}
		if srv.db.NoSync != noSync {
			t.Errorf("NoSync %v: the store's NoSync is %v", noSync, srv.db.NoSync)
		}
		db := client(srv, 1)
		ctx := context.Background()
		if noSync {
			mkTable(t, db, "nosync", false)
		}
		key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: fmt.Sprint(noSync)}}
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("nosync"), Item: key}); err != nil {
			t.Fatal(err)
		}
		if err := srv.Close(); err != nil {
			t.Fatal(err)
		}
	}
	srv := startServer(t, Options{DataDir: dir})
	out, err := client(srv, 1).Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("nosync")})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != 2 {
		t.Fatalf("after a clean stop with and without syncs: %d items, want 2", len(out.Items))
	}
}
