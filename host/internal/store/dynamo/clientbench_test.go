package dynamo_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// benchRow is the item of BenchmarkClientRequest: a row's size and shape
// (key, a few scalars, a set, a nested map with a list).
func benchRow(i int) abi.Item {
	return abi.Item{"pk": abi.S("p"), "sk": abi.N(strconv.Itoa(i)), "name": abi.S("item-name-with-some-length"),
		"count": abi.N(strconv.Itoa(i * 7)), "tags": abi.SS("a", "b", "c"),
		"doc": abi.M(abi.Item{"x": abi.N("1"), "y": abi.S("why"), "z": abi.L(abi.S("p"), abi.S("q"))})}
}

// benchWideRow is benchRow with six attributes more (12): an item wider
// than a Go map's first group of 8 entries, as an event with its metadata
// or a row with a few more fields.
func benchWideRow(i int) abi.Item {
	it := benchRow(i)
	for _, a := range []string{"status", "owner", "region", "createdAt", "updatedAt", "version"} {
		it[a] = abi.S(a + "-" + strconv.Itoa(i))
	}
	return it
}

func benchKey(i int) abi.Item { return abi.Item{"pk": abi.S("p"), "sk": abi.N(strconv.Itoa(i))} }

// benchCall is one operation of BenchmarkClientRequest: the same request
// sent three ways, and the fixed answer the server gives it.
type benchCall struct {
	name   string
	op     string // the operation, when not name
	answer string // the response body (of table "wide" for one with op)
	body   []byte // the request's JSON (raw-signed sends these bytes)
	sdk    func(ctx context.Context, c *dynamodb.Client) error
	host   func(ctx context.Context, db *dynamo.DB) error
}

func mustJSON(tb testing.TB, it abi.Item) string {
	b, err := ddbjson.ItemToJSON(it)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func mustAV(tb testing.TB, it abi.Item) map[string]types.AttributeValue {
	m, err := ddbclient.ToAttributeMap(it)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func benchCalls(tb testing.TB) []benchCall {
	const table, wideTable = "bench", "wide"
	row := benchRow(1)
	var rows10, wide10, keys10 []string
	var keysAV, rowsAV []map[string]types.AttributeValue
	var keys, rows []abi.Item
	for i := range 10 {
		rows10 = append(rows10, mustJSON(tb, benchRow(i)))
		wide10 = append(wide10, mustJSON(tb, benchWideRow(i)))
		keys10 = append(keys10, mustJSON(tb, benchKey(i)))
		keysAV = append(keysAV, mustAV(tb, benchKey(i)))
		rowsAV = append(rowsAV, mustAV(tb, benchRow(i)))
		keys = append(keys, benchKey(i))
		rows = append(rows, benchRow(i))
	}
	join := func(s []string) string { return "[" + joinComma(s) + "]" }
	cond := &store.Cond{Expr: "attribute_not_exists(#k) OR #v < :v", Names: map[string]string{"#k": "pk", "#v": "count"},
		Values: map[string]abi.Value{":v": abi.N("5")}}
	condAV := map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: "5"}}
	// Query's values, ready as the conditions' are
	queryValues := map[string]abi.Value{":p": abi.S("p")}
	queryAV := map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "p"}}
	putAV := mustAV(tb, row)
	twi := func(i int) string {
		return `{"Put":{"TableName":"bench","Item":` + mustJSON(tb, benchRow(i)) +
			`,"ConditionExpression":"attribute_not_exists(#k) OR #v < :v","ExpressionAttributeNames":{"#k":"pk","#v":"count"},"ExpressionAttributeValues":{":v":{"N":"5"}}}}`
	}
	return []benchCall{
		{
			name: "PutItem", answer: `{}`,
			body: []byte(`{"TableName":"bench","Item":` + mustJSON(tb, row) +
				`,"ConditionExpression":"attribute_not_exists(#k) OR #v < :v","ExpressionAttributeNames":{"#k":"pk","#v":"count"},"ExpressionAttributeValues":{":v":{"N":"5"}}}`),
			sdk: func(ctx context.Context, c *dynamodb.Client) error {
				_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: putAV,
					ConditionExpression:      aws.String(cond.Expr),
					ExpressionAttributeNames: cond.Names, ExpressionAttributeValues: condAV})
				return err
			},
			host: func(ctx context.Context, db *dynamo.DB) error {
				return db.PutItem(ctx, store.Put{Table: table, Item: row, Cond: cond})
			},
		},
		{
			name:   "BatchGetItem",
			answer: `{"Responses":{"bench":` + join(rows10) + `},"UnprocessedKeys":{}}`,
			body:   []byte(`{"RequestItems":{"bench":{"ConsistentRead":true,"Keys":` + join(keys10) + `}}}`),
			sdk: func(ctx context.Context, c *dynamodb.Client) error {
				_, err := c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
					table: {Keys: keysAV, ConsistentRead: aws.Bool(true)}}})
				return err
			},
			host: func(ctx context.Context, db *dynamo.DB) error {
				got, err := db.BatchGetItem(ctx, table, keys)
				if err == nil && got[9] == nil {
					err = fmt.Errorf("BatchGetItem lost an item")
				}
				return err
			},
		},
		{
			name:   "Query",
			answer: `{"Count":10,"Items":` + join(rows10) + `,"ScannedCount":10}`,
			body:   []byte(`{"ConsistentRead":true,"ExpressionAttributeValues":{":p":{"S":"p"}},"KeyConditionExpression":"pk = :p","ScanIndexForward":true,"TableName":"bench"}`),
			sdk: func(ctx context.Context, c *dynamodb.Client) error {
				out, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(table), KeyConditionExpression: aws.String("pk = :p"),
					ExpressionAttributeValues: queryAV,
					ConsistentRead:            aws.Bool(true), ScanIndexForward: aws.Bool(true)})
				if err == nil && len(out.Items) != 10 {
					err = fmt.Errorf("Query read %d items", len(out.Items))
				}
				return err
			},
			host: func(ctx context.Context, db *dynamo.DB) error {
				p, err := db.Query(ctx, store.Query{Table: table, KeyCond: "pk = :p", Values: queryValues})
				if err == nil && len(p.Items) != 10 {
					err = fmt.Errorf("Query read %d items", len(p.Items))
				}
				return err
			},
		},
		{
			// Query's request answered with 10 items of 12 attributes
			name:   "QueryWide",
			answer: `{"Count":10,"Items":` + join(wide10) + `,"ScannedCount":10}`,
			op:     "Query",
			body:   []byte(`{"ConsistentRead":true,"ExpressionAttributeValues":{":p":{"S":"p"}},"KeyConditionExpression":"pk = :p","ScanIndexForward":true,"TableName":"wide"}`),
			sdk: func(ctx context.Context, c *dynamodb.Client) error {
				out, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(wideTable), KeyConditionExpression: aws.String("pk = :p"),
					ExpressionAttributeValues: queryAV, ConsistentRead: aws.Bool(true), ScanIndexForward: aws.Bool(true)})
				if err == nil && len(out.Items) != 10 {
					err = fmt.Errorf("Query read %d items", len(out.Items))
				}
				return err
			},
			host: func(ctx context.Context, db *dynamo.DB) error {
				p, err := db.Query(ctx, store.Query{Table: wideTable, KeyCond: "pk = :p", Values: queryValues})
				if err == nil && (len(p.Items) != 10 || len(p.Items[9]) != 12) {
					err = fmt.Errorf("Query read %d items", len(p.Items))
				}
				return err
			},
		},
		{
			name: "TransactWriteItems", answer: `{}`,
			body: []byte(`{"TransactItems":[` + twi(0) + `,` + twi(1) + `,` + twi(2) + `,` + twi(3) + `]}`),
			sdk: func(ctx context.Context, c *dynamodb.Client) error {
				items := make([]types.TransactWriteItem, 4)
				for j := range items {
					items[j] = types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: rowsAV[j],
						ConditionExpression: aws.String(cond.Expr), ExpressionAttributeNames: cond.Names, ExpressionAttributeValues: condAV}}
				}
				_, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
				return err
			},
			host: func(ctx context.Context, db *dynamo.DB) error {
				ws := make([]store.Write, 4)
				for j := range ws {
					// ready items, as the SDK's are (rowsAV)
					ws[j] = store.Write{Put: &store.Put{Table: table, Item: rows[j], Cond: cond}}
				}
				return db.TransactWriteItems(ctx, ws)
			},
		},
	}
}

func joinComma(s []string) string {
	var b bytes.Buffer
	for i, e := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(e)
	}
	return b.String()
}

// op is the operation c sends.
func (c benchCall) operation() string {
	if c.op != "" {
		return c.op
	}
	return c.name
}

// fixedServer answers every request with the body its X-Amz-Target names
// (a request of table "wide" the body of the call with an op),
// checksummed as DynamoDB checksums it (x-amz-crc32).
func fixedServer(tb testing.TB, calls []benchCall) *httptest.Server {
	answers := map[string][]byte{}
	for _, c := range calls {
		key := "DynamoDB_20120810." + c.operation()
		if c.op != "" {
			key += "/wide"
		}
		answers[key] = []byte(c.answer)
	}
	wide := []byte(`"TableName":"wide"`)
	var reqs sync.Pool // the requests' bodies, read into reused buffers
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := reqs.Get().(*bytes.Buffer)
		if req == nil {
			req = new(bytes.Buffer)
		}
		req.Reset()
		_, _ = req.ReadFrom(r.Body)
		key := r.Header.Get("X-Amz-Target")
		if bytes.Contains(req.Bytes(), wide) {
			key += "/wide"
		}
		reqs.Put(req)
		body, ok := answers[key]
		if !ok {
			http.Error(w, "unknown target", http.StatusBadRequest)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/x-amz-json-1.0")
		h.Set("x-amz-crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
		h.Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// rawSigned sends body as a SigV4-signed POST with net/http and reads the
// answer: the floor of a request's client CPU (no encoding, no decoding).
type rawSigned struct {
	client *http.Client
	url    string
	signer *v4.Signer
	creds  aws.Credentials
}

func (r *rawSigned) do(ctx context.Context, target string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+target)
	sum := sha256.Sum256(body)
	if err := r.signer.SignHTTP(ctx, r.creds, req, hex.EncodeToString(sum[:]), "dynamodb", "us-east-1", time.Now()); err != nil {
		return err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return err
}

// BenchmarkClientRequest measures the client's CPU per request against a
// loopback server answering a fixed body: sdk is aws-sdk-go-v2's DynamoDB
// client given ready SDK inputs, host the host's client (dynamo.DB) given
// abi items (on the Wire's own connections), host-nethttp the same
// through net/http's client, raw-signed a SigV4-signed net/http POST of the same request
// bytes that reads the answer and decodes nothing. cpu-ns/op is the
// process's CPU per request (the client's and the loopback server's, the
// garbage collector's included): on a machine other work shares it moves
// far less than ns/op.
//
//	go test ./host/internal/store/dynamo -run '^$' -bench ClientRequest -benchmem
func BenchmarkClientRequest(b *testing.B) {
	calls := benchCalls(b)
	srv := fixedServer(b, calls)
	ctx := context.Background()
	client, err := ddbclient.NewClient(ctx, srv.URL, "us-east-1")
	if err != nil {
		b.Fatal(err)
	}
	db := dynamo.New(client)
	// The same host client with its requests through net/http's client (an
	// HTTP client that is not the SDK's BuildableClient): what the Wire's
	// own connections save, side by side.
	viaNet, err := ddbclient.NewClient(ctx, srv.URL, "us-east-1", func(o *dynamodb.Options) {
		o.HTTPClient = ddbclient.HTTPClient(ddbclient.DefaultIdleConns).Freeze()
	})
	if err != nil {
		b.Fatal(err)
	}
	dbNet := dynamo.New(viaNet)
	raw := &rawSigned{client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 100}}, url: srv.URL,
		signer: v4.NewSigner(), creds: aws.Credentials{AccessKeyID: "dynafold", SecretAccessKey: "dynafold"}}
	b.Run("sdk", func(b *testing.B) {
		for _, c := range calls {
			b.Run(c.name, func(b *testing.B) {
				b.ReportAllocs()
				cpu := cpuNow()
				for b.Loop() {
					if err := c.sdk(ctx, client); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpu)
			})
		}
	})
	b.Run("host", func(b *testing.B) {
		for _, c := range calls {
			b.Run(c.name, func(b *testing.B) {
				b.ReportAllocs()
				cpu := cpuNow()
				for b.Loop() {
					if err := c.host(ctx, db); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpu)
			})
		}
	})
	b.Run("host-nethttp", func(b *testing.B) {
		for _, c := range calls {
			b.Run(c.name, func(b *testing.B) {
				b.ReportAllocs()
				cpu := cpuNow()
				for b.Loop() {
					if err := c.host(ctx, dbNet); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpu)
			})
		}
	})
	b.Run("raw-signed", func(b *testing.B) {
		for _, c := range calls {
			b.Run(c.name, func(b *testing.B) {
				b.ReportAllocs()
				cpu := cpuNow()
				for b.Loop() {
					if err := raw.do(ctx, c.operation(), c.body); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpu)
			})
		}
	})
}

// cpuNow is the process's user and system CPU time so far.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the process's CPU per iteration since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuNow()-start)/float64(b.N), "cpu-ns/op")
}
