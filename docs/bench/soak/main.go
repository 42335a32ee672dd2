// Command soak drives the production-shape soak of docs/bench/soak: it
// appends a hostile load of Inventory events (the scaffolded inventory
// plugin's stream) and works out each row's total itself; -check compares
// the read-model table with that arithmetic; -serve is a webhook that is
// slow 1 answer in 25 and answers 503 1 in 40, recording what it accepts;
// -checkfx compares what it recorded with the effects each row must have
// delivered (each once at least, in order per row); -damage edits rows
// behind the host's back for host verify to find. See README.md.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
)

type want struct {
	Total   string   `json:"total"`
	Version uint64   `json:"version"` // the last event that changed the state: a run of no-op events writes nothing
	Bad     bool     `json:"bad"`     // has a BadAmount event: given up, row stops before it
	Fx      []uint64 `json:"fx"`      // versions whose effect must be delivered
}

func main() {
	cfgPath := flag.String("config", "dynafold.json", "")
	streams := flag.Int("streams", 200, "")
	events := flag.Int("events", 20, "")
	conc := flag.Int("c", 8, "")
	badEvery := flag.Int("bad-every", 0, "one stream in N gets a BadAmount event (0: none)")
	out := flag.String("out", "expected.json", "")
	check := flag.Bool("check", false, "compare the rows table with -out")
	seed := flag.Uint64("seed", 1, "")
	damage := flag.Int("damage", 0, "set the total of N rows to 999 by hand")
	serve := flag.String("serve", "", "serve a webhook on this address, appending each body to -recv")
	recv := flag.String("recv", "received.jsonl", "")
	checkfx := flag.Bool("checkfx", false, "compare -recv with -out's effects")
	flag.Parse()
	if *serve != "" {
		doServe(*serve, *recv)
		return
	}
	if *checkfx {
		os.Exit(doCheckFx(*out, *recv))
	}
	ctx := context.Background()
	cfg, err := host.LoadConfig(*cfgPath)
	if err != nil {
		log.Fatal(err)
	}
	if *check {
		os.Exit(doCheck(ctx, cfg, *out))
	}
	if *damage > 0 {
		doDamage(ctx, cfg, *damage)
		return
	}
	h, err := host.New(ctx, cfg, host.WithEventStoreOnly())
	if err != nil {
		log.Fatal(err)
	}
	exp := map[string]want{}
	var mu sync.Mutex
	ids := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	var appended, retried int64
	for w := 0; w < *conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ids {
				r := rand.New(rand.NewPCG(*seed, uint64(i)))
				id := fmt.Sprintf("s-%d", i)
				total := new(big.Rat)
				var v, applied uint64
				bad := *badEvery > 0 && i%*badEvery == 0
				badAt := 2 + r.IntN(*events-1)
				stopped := false
				var fx []uint64
				for k := 1; k <= *events; k++ {
					var ev host.NewEvent
					switch {
					case k == 1:
						ev = host.NewEvent{Type: "InventoryOpened", Data: abi.Item{"name": abi.S("item " + id)}}
					case bad && k == badAt:
						ev = host.NewEvent{Type: "InventoryIncreased", Data: abi.Item{"amount": abi.S("lots")}}
					case r.IntN(10) == 0:
						ev = host.NewEvent{Type: "InventoryAudited", Data: abi.Item{"by": abi.S("x")}}
					default:
						amt := fmt.Sprintf("%d.%02d", r.IntN(50), 1+r.IntN(99))
						typ := "InventoryIncreased"
						if r.IntN(3) == 0 {
							typ = "InventoryDecreased"
						}
						ev = host.NewEvent{Type: typ, Data: abi.Item{"amount": abi.N(amt)}}
					}
					for try := 0; ; try++ {
						_, err := h.Append(ctx, "Inventory", id, v, ev)
						if err == nil {
							break
						}
						if try > 20 {
							log.Fatalf("append %s v%d: %v", id, v+1, err)
						}
						mu.Lock()
						retried++
						mu.Unlock()
						time.Sleep(time.Duration(50*(try+1)) * time.Millisecond)
						// a timeout may have written it: read the head
						evs, err2 := h.ReadStream(ctx, "Inventory", id, 0, 0)
						if err2 == nil && uint64(len(evs)) > v {
							break
						}
					}
					v++
					mu.Lock()
					appended++
					mu.Unlock()
					if stopped {
						continue
					}
					switch ev.Type {
					case "InventoryOpened":
						applied = v
					case "InventoryIncreased", "InventoryDecreased":
						if s := ev.Data["amount"]; s.Kind != abi.KindN {
							stopped = true // the row stays before it
							continue
						}
						a, _ := new(big.Rat).SetString(ev.Data["amount"].Str)
						if ev.Type == "InventoryDecreased" {
							if a.Cmp(total) > 0 {
								continue // rejected, acknowledged: nothing changes
							}
							a.Neg(a)
						}
						total.Add(total, a)
						applied = v
						fx = append(fx, v)
					}
				}
				mu.Lock()
				exp[id] = want{Total: total.FloatString(2), Version: applied, Bad: bad, Fx: fx}
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < *streams; i++ {
		ids <- i
	}
	close(ids)
	wg.Wait()
	b, _ := json.MarshalIndent(exp, "", " ")
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("appended %d events to %d streams in %s (%d retries)\n", appended, *streams, time.Since(start).Round(time.Millisecond), retried)
}

func doCheck(ctx context.Context, cfg *host.Config, path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	exp := map[string]want{}
	if err := json.Unmarshal(b, &exp); err != nil {
		log.Fatal(err)
	}
	ac, err := config.LoadDefaultConfig(ctx, config.WithRegion("us-east-1"))
	if err != nil {
		log.Fatal(err)
	}
	c := dynamodb.NewFromConfig(ac, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(cfg.Endpoint) })
	got := map[string]map[string]types.AttributeValue{}
	p := dynamodb.NewScanPaginator(c, &dynamodb.ScanInput{TableName: aws.String(cfg.Projections[0].Table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		pg, err := p.NextPage(ctx)
		if err != nil {
			log.Fatal(err)
		}
		for _, it := range pg.Items {
			idv, ok := it["inventoryId"].(*types.AttributeValueMemberS)
			if !ok {
				continue // an outbox item
			}
			id := idv.Value
			got[id] = it
		}
	}
	bad := 0
	for id, w := range exp {
		it, ok := got[id]
		if !ok {
			fmt.Printf("%s: row missing\n", id)
			bad++
			continue
		}
		tot := "0"
		if n, ok := it["total"].(*types.AttributeValueMemberN); ok {
			tot = n.Value
		}
		ver := it["version"].(*types.AttributeValueMemberN).Value
		var gv uint64
		fmt.Sscan(ver, &gv)
		wt, _ := new(big.Rat).SetString(w.Total)
		gt, _ := new(big.Rat).SetString(tot)
		if wt.Cmp(gt) != 0 || gv < w.Version {
			if w.Bad {
				// a given-up event: later events of the row fail the same way,
				// the row stays at the checkpoint before the bad one
				if wt.Cmp(gt) == 0 {
					continue
				}
			}
			fmt.Printf("%s: total %s version %s, want %s version %d (bad %v)\n", id, tot, ver, w.Total, w.Version, w.Bad)
			bad++
		}
	}
	if len(got) != len(exp) {
		fmt.Printf("%d rows, want %d\n", len(got), len(exp))
		bad++
	}
	fmt.Printf("checked %d rows: %d wrong\n", len(exp), bad)
	if bad > 0 {
		return 1
	}
	return 0
}

func client(ctx context.Context, cfg *host.Config) *dynamodb.Client {
	ac, err := config.LoadDefaultConfig(ctx, config.WithRegion("us-east-1"))
	if err != nil {
		log.Fatal(err)
	}
	return dynamodb.NewFromConfig(ac, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(cfg.Endpoint) })
}

func doDamage(ctx context.Context, cfg *host.Config, n int) {
	c := client(ctx, cfg)
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("s-%d", i*7)
		_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(cfg.Projections[0].Table),
			Key:              map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "Inventory#" + id}, "sk": &types.AttributeValueMemberS{Value: "Inventory"}},
			UpdateExpression: aws.String("SET #t = :t"), ExpressionAttributeNames: map[string]string{"#t": "total"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberN{Value: "999"}}})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("damaged", id)
	}
}

// doServe is a webhook that is slow 1 in 25 and fails 1 in 40 (503).
func doServe(addr, path string) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	log.Fatal(http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		if k%40 == 0 {
			w.WriteHeader(503)
			return
		}
		if k%25 == 0 {
			time.Sleep(2 * time.Second)
		}
		mu.Lock()
		f.Write(append(b, '\n'))
		mu.Unlock()
	})))
}

func doCheckFx(expPath, recvPath string) int {
	b, err := os.ReadFile(expPath)
	if err != nil {
		log.Fatal(err)
	}
	exp := map[string]want{}
	if err := json.Unmarshal(b, &exp); err != nil {
		log.Fatal(err)
	}
	f, err := os.Open(recvPath)
	if err != nil {
		log.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	first := map[string][]uint64{} // first deliveries, in arrival order
	seen := map[string]map[uint64]int{}
	total := 0
	for sc.Scan() {
		var m struct {
			Effect struct {
				ID      string `json:"id"`
				Version uint64 `json:"version"`
			} `json:"effect"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			log.Fatalf("%v: %s", err, sc.Text())
		}
		total++
		id, v := m.Effect.ID, m.Effect.Version
		if seen[id] == nil {
			seen[id] = map[uint64]int{}
		}
		seen[id][v]++
		if seen[id][v] == 1 {
			first[id] = append(first[id], v)
		}
	}
	bad, dups, missing, disorder, extra := 0, 0, 0, 0, 0
	ids := make([]string, 0, len(exp))
	for id := range exp {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		w := exp[id]
		for _, v := range w.Fx {
			if seen[id][v] == 0 {
				missing++
				if missing <= 5 {
					fmt.Printf("%s v%d: effect never delivered\n", id, v)
				}
			}
		}
		want := map[uint64]bool{}
		for _, v := range w.Fx {
			want[v] = true
		}
		for v, c := range seen[id] {
			if !want[v] {
				extra++
				if extra <= 5 {
					fmt.Printf("%s v%d: effect not expected\n", id, v)
				}
			}
			dups += c - 1
		}
		if !sort.SliceIsSorted(first[id], func(i, j int) bool { return first[id][i] < first[id][j] }) {
			disorder++
			if disorder <= 5 {
				fmt.Printf("%s: first deliveries out of order: %v\n", id, first[id])
			}
		}
	}
	bad = missing + extra + disorder
	fmt.Printf("effects: %d received, %d duplicates, %d missing, %d unexpected, %d rows out of order\n", total, dups, missing, extra, disorder)
	if bad > 0 {
		return 1
	}
	return 0
}
