package ddblocal

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	bolt "go.etcd.io/bbolt"
)

// TestY8_KillMidCheckpointLosesNoAcknowledgedWrite is the kill-at-random-
// points run with the child checkpointing its log into the data file every
// two logged commits, so kills land before, during and after checkpoints:
// every acknowledged write is there, once in the stream, in order, and the
// stream's sequence numbers go on after each restart.
func TestY8_KillMidCheckpointLosesNoAcknowledgedWrite(t *testing.T) {
	runDurability(t, durabilityCase{cycles: 80, checkpointEvery: 2})
}

// TestY8_KillMidCheckpointWithRestructuresLosesNothing: the same with the
// streams' shards split at random and a Kinesis destination split and
// merged at random: those writers of the data file drain the log first,
// concurrently with item writes and checkpoints.
func TestY8_KillMidCheckpointWithRestructuresLosesNothing(t *testing.T) {
	runDurability(t, durabilityCase{cycles: 60, checkpointEvery: 3, splits: true, kinesis: true})
}

// logRecords returns the offsets and lengths (frame and payload) of the
// records of the log file's current run.
func logRecords(t *testing.T, data []byte) (offs, lens []int) {
	t.Helper()
	off := 16 // the header
	var prev uint64
	for off+16 <= len(data) {
		n := int(binary.LittleEndian.Uint32(data[off:]))
		lsn := binary.LittleEndian.Uint64(data[off+8:])
		if lsn == 0 || off+16+n > len(data) || (prev != 0 && lsn != prev+1) {
			break
		}
		offs, lens = append(offs, off), append(lens, 16+n)
		prev = lsn
		off += 16 + n
	}
	return offs, lens
}

// crashWithLoggedWrites runs a child on a new data dir, creates table dur
// (with a stream), puts items one at a time and kills it: the writes are in
// the log, not yet in the data file. It returns the dir.
func crashWithLoggedWrites(t *testing.T, items int) string {
	t.Helper()
	dir := t.TempDir()
	putAndKill(t, dir, 0, items, true)
	return dir
}

// putAndKill runs a child on dir, creates table dur (with a stream) when
// create is set, puts items from..to-1 one at a time and kills it.
func putAndKill(t *testing.T, dir string, from, to int, create bool) {
	t.Helper()
	c := startChild(t, dir)
	db, _ := verifyClients(c.wait(t))
	ctx := ctxT(t)
	if create {
		if _, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
			TableName:            aws.String("dur"),
			BillingMode:          types.BillingModePayPerRequest,
			AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
			KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
			StreamSpecification:  &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage},
		}); err != nil {
			c.kill()
			t.Fatal(err)
		}
	}
	for i := from; i < to; i++ {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("dur"),
			Item: map[string]types.AttributeValue{"pk": s(fmt.Sprintf("i%02d", i)), "w": s(fmt.Sprintf("w%02d", i))}}); err != nil {
			c.kill()
			t.Fatal(err)
		}
	}
	c.kill()
}

// storedItems counts the items of table dur in the data file alone.
func storedItems(t *testing.T, dir string) int {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, dataFileName), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := 0
	_ = db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(itemsBucket("dur")); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	})
	return n
}

// checkReplayed starts ddblocal on dir and checks items i00..i(n-1) are
// there, with their stream records in write order, and that a new write's
// record comes after them.
func checkReplayed(t *testing.T, dir string, n int) {
	t.Helper()
	srv, err := Start(context.Background(), Options{DataDir: dir, TTLInterval: -1})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer srv.Close()
	ctx := ctxT(t)
	db, sc := verifyClients(srv.Endpoint())
	out, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("dur")})
	if err != nil {
		t.Fatal(err)
	}
	if int(out.Count) != n {
		t.Errorf("%d items after the restart, want %d", out.Count, n)
	}
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("dur"),
		Item: map[string]types.AttributeValue{"pk": s("after"), "w": s("after")}}); err != nil {
		t.Fatal(err)
	}
	recs, _, err := readWholeStream(ctx, db, sc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.token)
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("P:w%02d", i))
	}
	want = append(want, "P:after")
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("stream records in sequence order:\n got %v\nwant %v", got, want)
	}
}

// TestY8_LogLeftByACrashReplays: writes acknowledged before a kill are in
// the log only; the next start replays them into the data file (items and
// stream records, in order), new writes' records follow, and a clean stop
// leaves the log empty.
func TestY8_LogLeftByACrashReplays(t *testing.T) {
	const items = 12
	dir := crashWithLoggedWrites(t, items)
	if n := storedItems(t, dir); n == items {
		t.Fatalf("the data file holds all %d items before the restart: the writes did not wait in the log", n)
	}
	data, err := os.ReadFile(filepath.Join(dir, logFileName))
	if err != nil {
		t.Fatal(err)
	}
	if offs, _ := logRecords(t, data); len(offs) < items {
		t.Fatalf("the log holds %d records, want at least %d", len(offs), items)
	}
	checkReplayed(t, dir, items)
	if n := storedItems(t, dir); n != items+1 {
		t.Errorf("the data file holds %d items after a clean stop, want %d", n, items+1)
	}
	// the log file keeps its preallocated size (whole MiB of zeros and
	// records already in the data file)
	if fi, err := os.Stat(filepath.Join(dir, logFileName)); err != nil || fi.Size() == 0 || fi.Size()%(1<<20) != 0 {
		t.Errorf("the log after a clean stop: %v, %v; want its preallocated size, whole MiB", fi.Size(), err)
	}
}

// TestY8_ReusedLogReplaysItsCurrentRunOnly: a log written over from its
// start after a checkpoint (the replay at a start is one) holds the current
// run's records, then records of the earlier run, already in the data
// file. A kill then replays the current run alone; the file keeps its
// preallocated size; a torn last record of the current run is dropped even
// with the earlier run's records after it, and a damaged middle one is
// refused.
func TestY8_ReusedLogReplaysItsCurrentRunOnly(t *testing.T) {
	const first, second = 12, 4
	prepare := func(t *testing.T) (dir string, offs, lens []int, data []byte) {
		dir = crashWithLoggedWrites(t, first)
		path := filepath.Join(dir, logFileName)
		before, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		putAndKill(t, dir, first, first+second, false) // replays the first run, then logs over it
		if n := storedItems(t, dir); n != first {
			t.Fatalf("the data file holds %d items after the second run, want the %d of the first run", n, first)
		}
		data, err = os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(data)) != before.Size() {
			t.Errorf("the log is %d bytes after the second run, %d before: appends changed its size", len(data), before.Size())
		}
		offs, lens = logRecords(t, data)
		if len(offs) != second {
			t.Fatalf("the log's current run holds %d records, want %d", len(offs), second)
		}
		end := offs[len(offs)-1] + lens[len(lens)-1]
		if next := binary.LittleEndian.Uint64(data[end+8:]); next == 0 {
			t.Fatalf("no record of the first run after the current run's end (lsn %d)", next)
		}
		return dir, offs, lens, data
	}
	t.Run("kill", func(t *testing.T) {
		dir, _, _, _ := prepare(t)
		checkReplayed(t, dir, first+second)
	})
	t.Run("torn last record", func(t *testing.T) {
		dir, offs, lens, data := prepare(t)
		last := len(offs) - 1
		data[offs[last]+lens[last]-1] ^= 0xff
		if err := os.WriteFile(filepath.Join(dir, logFileName), data, 0o600); err != nil {
			t.Fatal(err)
		}
		checkReplayed(t, dir, first+second-1)
	})
	t.Run("damaged middle record", func(t *testing.T) {
		dir, offs, lens, data := prepare(t)
		data[offs[1]+lens[1]-1] ^= 0xff
		if err := os.WriteFile(filepath.Join(dir, logFileName), data, 0o600); err != nil {
			t.Fatal(err)
		}
		srv, err := Start(context.Background(), Options{DataDir: dir, TTLInterval: -1})
		if err == nil {
			srv.Close()
			t.Fatal("Start opened a data directory whose reused log has a damaged middle record")
		}
		if !errors.Is(err, ErrDataFileDamaged) {
			t.Errorf("Start: %v; want ErrDataFileDamaged", err)
		}
	})
}

// TestY8_TornLogTailIsDropped: a crash mid-append leaves a torn last
// record; the store opens without it, and with every record before it.
func TestY8_TornLogTailIsDropped(t *testing.T) {
	const items = 8
	for _, tc := range []struct {
		name string
		tear func(data []byte, offs, lens []int) []byte
		left int
	}{
		{"last record cut short", func(data []byte, offs, lens []int) []byte {
			last := len(offs) - 1
			return data[:offs[last]+lens[last]-3]
		}, items - 1},
		{"a frame with no payload after the last record", func(data []byte, offs, lens []int) []byte {
			end := offs[len(offs)-1] + lens[len(lens)-1]
			var h [16]byte
			binary.LittleEndian.PutUint32(h[0:], 4000)
			binary.LittleEndian.PutUint64(h[8:], 1<<40)
			return append(append(data[:end:end], h[:]...), "torn"...)
		}, items},
		{"last record's bytes garbled", func(data []byte, offs, lens []int) []byte {
			last := len(offs) - 1
			data[offs[last]+lens[last]-1] ^= 0xff
			return data
		}, items - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := crashWithLoggedWrites(t, items)
			path := filepath.Join(dir, logFileName)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			offs, lens := logRecords(t, data)
			if len(offs) < items {
				t.Fatalf("the log holds %d records, want at least %d", len(offs), items)
			}
			if err := os.WriteFile(path, tc.tear(data, offs, lens), 0o600); err != nil {
				t.Fatal(err)
			}
			checkReplayed(t, dir, tc.left)
		})
	}
}

// TestY8_DamagedLogRecordIsRefused: a record that does not read while
// complete records follow it is damage, not a torn end: Start refuses the
// data directory with ErrDataFileDamaged and says what to do.
func TestY8_DamagedLogRecordIsRefused(t *testing.T) {
	dir := crashWithLoggedWrites(t, 6)
	path := filepath.Join(dir, logFileName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	offs, lens := logRecords(t, data)
	if len(offs) < 6 {
		t.Fatalf("the log holds %d records, want at least 6", len(offs))
	}
	data[offs[2]+lens[2]-2] ^= 0x55 // a payload byte of a middle record
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := Start(context.Background(), Options{DataDir: dir, TTLInterval: -1})
	if err == nil {
		srv.Close()
		t.Fatal("Start opened a data directory whose log has a damaged middle record")
	}
	if !errors.Is(err, ErrDataFileDamaged) {
		t.Errorf("Start: %v; want ErrDataFileDamaged", err)
	}
	t.Logf("Start: %v", err)
	for _, want := range []string{path, "backup", "move"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Start: %v; want it to mention %q", err, want)
		}
	}
}

// TestY8_DataDirWithoutALogOpens: a data directory of an earlier version
// (a data file, no log) opens with every item, and gets a log.
func TestY8_DataDirWithoutALogOpens(t *testing.T) {
	const items = 5
	dir := crashWithLoggedWrites(t, items)
	checkReplayed(t, dir, items) // a clean stop: everything in the data file
	if err := os.Remove(filepath.Join(dir, logFileName)); err != nil {
		t.Fatal(err)
	}
	srv, err := Start(context.Background(), Options{DataDir: dir, TTLInterval: -1})
	if err != nil {
		t.Fatalf("Start on a data dir without a log: %v", err)
	}
	db, _ := verifyClients(srv.Endpoint())
	out, err := db.Scan(ctxT(t), &dynamodb.ScanInput{TableName: aws.String("dur")})
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != items+1 {
		t.Errorf("%d items, want %d", out.Count, items+1)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, logFileName)); err != nil {
		t.Errorf("no log after a start: %v", err)
	}
}

// TestY8_DeletedTableStaysDeletedAfterItsLoggedWrites: a table's writes
// still in the log when it is deleted are applied before the deletion,
// never after it (which would bring its items back): after a kill and a
// restart the table is gone, and so are its items from the data file.
func TestY8_DeletedTableStaysDeletedAfterItsLoggedWrites(t *testing.T) {
	dir := crashWithLoggedWrites(t, 0)
	c := startChild(t, dir)
	db, _ := verifyClients(c.wait(t))
	ctx := ctxT(t)
	for i := range 6 {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("dur"),
			Item: map[string]types.AttributeValue{"pk": s(fmt.Sprintf("i%02d", i))}}); err != nil {
			c.kill()
			t.Fatal(err)
		}
	}
	if _, err := db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String("dur")}); err != nil {
		c.kill()
		t.Fatal(err)
	}
	c.kill()
	srv, err := Start(context.Background(), Options{DataDir: dir, TTLInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	db, _ = verifyClients(srv.Endpoint())
	out, err := db.ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.TableNames) != 0 {
		t.Errorf("tables after the restart: %v, want none", out.TableNames)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if n := storedItems(t, dir); n != 0 {
		t.Errorf("the data file holds %d items of the deleted table", n)
	}
}
