package ddblocal

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The child process of BenchmarkServerCPU: a ddblocal (on the data dir
// named by cpuChildDataEnv, in memory when it is "-"), its endpoint
// printed on stdout, serving until its stdin closes. With cpuChildProfEnv
// set it writes a CPU profile of its whole life there.
const (
	cpuChildDataEnv = "DDBLOCAL_CPU_CHILD_DATA"
	cpuChildProfEnv = "DDBLOCAL_CPU_CHILD_PROFILE"
	// cpuChildStatsEnv, when set, makes a child with a data dir print how
	// many item writes it stored in how many store commits when it exits.
	cpuChildStatsEnv = "DDBLOCAL_CPU_CHILD_STATS"
	// cpuWorkersEnv sets the number of concurrent clients (default 8;
	// 1: every write its own log append and sync).
	cpuWorkersEnv = "DDBLOCAL_CPU_WORKERS"
	cpuHelperTest = "TestServerCPU_HelperProcess"
	// cpuNoSyncPrefix before the data dir runs the child with
	// Options.NoSync (the "data-nosync" store).
	cpuNoSyncPrefix = "nosync:"
)

func TestServerCPU_HelperProcess(t *testing.T) {
	dir := os.Getenv(cpuChildDataEnv)
	if dir == "" {
		t.Skip("the child process of BenchmarkServerCPU (runs only with " + cpuChildDataEnv + " set)")
	}
	opts := Options{TTLInterval: -1, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if dir != "-" {
		opts.DataDir = dir
	}
	if d, ok := strings.CutPrefix(dir, cpuNoSyncPrefix); ok {
		opts.DataDir, opts.NoSync = d, true
	}
	if p := os.Getenv(cpuChildProfEnv); p != "" {
		f, err := os.Create(p)
		if err != nil {
			fmt.Printf("ERROR %v\n", err)
			os.Exit(3)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Printf("ERROR %v\n", err)
			os.Exit(3)
		}
	}
	srv, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Printf("ERROR %v\n", err)
		os.Exit(3)
	}
	fmt.Printf("ENDPOINT %s\n", srv.Endpoint())
	_, _ = io.Copy(io.Discard, os.Stdin)
	pprof.StopCPUProfile()
	if srv.db != nil && os.Getenv(cpuChildStatsEnv) != "" {
		fmt.Fprintf(os.Stderr, "ddblocal child: %d item writes in %d store commits\n", srv.gc.writes.Load(), srv.gc.commits.Load())
		st := srv.db.Stats().TxStats
		fmt.Fprintf(os.Stderr, "ddblocal child: %d page writes, %d pages allocated (%d bytes)\n", st.GetWrite(), st.GetPageCount(), st.GetPageAlloc())
		if srv.wal != nil {
			fmt.Fprintf(os.Stderr, "ddblocal child: %d log appends, %d checkpoints into the data file\n", srv.wal.Appends.Load(), srv.wal.Checkpoints.Load())
		}
	}
	os.Exit(0)
}

// cpuServer is a server process BenchmarkServerCPU measures.
type cpuServer struct {
	endpoint string
	pid      int
	stop     func()
}

// startDDBLocalProcess re-executes the test binary as a ddblocal child.
func startDDBLocalProcess(b *testing.B, data string) cpuServer {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^"+cpuHelperTest+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), cpuChildDataEnv+"="+data)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	ep := ""
	for sc.Scan() {
		if e, ok := strings.CutPrefix(sc.Text(), "ENDPOINT "); ok {
			ep = e
			break
		}
		if strings.HasPrefix(sc.Text(), "ERROR ") {
			break
		}
	}
	if ep == "" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		b.Fatal("the ddblocal child did not start")
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return cpuServer{endpoint: ep, pid: cmd.Process.Pid, stop: func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}}
}

// startDynaliteProcess starts dynalite from the install the conformance
// run uses (ddblocal/conformance/dynalite.sh install), skipping when node
// or the install is absent.
func startDynaliteProcess(b *testing.B, data string) cpuServer {
	b.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("node is not installed: dynalite cannot run")
	}
	dir := os.Getenv("DYNALITE_DIR")
	if dir == "" {
		dir = filepath.Join("..", ".cache", "dynalite")
	}
	cli := filepath.Join(dir, "node_modules", "dynalite", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		b.Skipf("dynalite is not installed at %s: run `bash ddblocal/conformance/dynalite.sh install`", dir)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	args := []string{cli, "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0"}
	if data != "-" {
		args = append(args, "--path", data)
	}
	cmd := exec.Command(node, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	ep := fmt.Sprintf("http://127.0.0.1:%d", port)
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	for i := 0; ; i++ {
		resp, err := http.Post(ep, "application/x-amz-json-1.0", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
			break
		}
		if i == 100 {
			stop()
			b.Fatalf("dynalite did not answer at %s: %v", ep, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return cpuServer{endpoint: ep, pid: cmd.Process.Pid, stop: stop}
}

// procCPU is a process's user and system CPU so far, from /proc.
func procCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skipf("reading a process's CPU needs /proc: %v", err)
	}
	// The fields after the command (which may hold spaces) start after ")".
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	const userHZ = 100 // USER_HZ, fixed at 100 on Linux
	return time.Duration(ut+st) * time.Second / userHZ
}

// procSys is a process's system CPU so far (the kernel's share of
// procCPU), from /proc.
func procSys(b *testing.B, pid int) time.Duration {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skipf("reading a process's CPU needs /proc: %v", err)
	}
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(st) * time.Second / 100
}

func cpuClient(ep string) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(ep),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "secret", ""),
		HTTPClient:  &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}})
}

// cpuItem is the item BenchmarkServerCPU writes: a row's size and shape.
func cpuItem(pk string, i int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": s(pk), "sk": n(strconv.Itoa(i)), "name": s("item-name-with-some-length"),
		"count": n(strconv.Itoa(i * 7)), "tags": &types.AttributeValueMemberSS{Value: []string{"a", "b", "c"}},
		"doc": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"x": n("1"), "y": s("why"),
			"z": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("p"), s("q")}}}}}
}

// cpuWorkers runs b.N requests over 8 concurrent clients (cpuWorkersEnv) and reports the
// server's CPU per request.
func cpuWorkers(b *testing.B, srv cpuServer, req func(c *dynamodb.Client, w, i int) error) {
	workers := 8
	if n, err := strconv.Atoi(os.Getenv(cpuWorkersEnv)); err == nil && n > 0 {
		workers = n
	}
	c := cpuClient(srv.endpoint)
	// Warm the connections, the server's and the client's.
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				_ = req(c, w, -1-i)
			}
		}()
	}
	wg.Wait()
	b.ResetTimer()
	before, sysBefore := procCPU(b, srv.pid), procSys(b, srv.pid)
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < b.N; i += workers {
				if err := req(c, w, i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	after, sysAfter := procCPU(b, srv.pid), procSys(b, srv.pid)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(after-before)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(sysAfter-sysBefore)/float64(time.Microsecond)/float64(b.N), "sys-µs/op")
}

// BenchmarkServerCPU measures the server's CPU per request (cpu-µs/op,
// read from /proc) for ddblocal and dynalite, each its own process, in
// memory and on disk (ddblocal's --data, dynalite's --path): a PutItem of a
// row-sized item, and a consistent GetItem, 8 clients at once.
//
//	go test ./ddblocal -run '^$' -bench ServerCPU -benchtime 4000x
func BenchmarkServerCPU(b *testing.B) {
	servers := []struct {
		name  string
		start func(b *testing.B, data string) cpuServer
	}{{"ddblocal", startDDBLocalProcess}, {"dynalite", startDynaliteProcess}}
	for _, sv := range servers {
		b.Run(sv.name, func(b *testing.B) {
			stores := []string{"memory", "data"}
			if sv.name == "ddblocal" {
				// dynalite's data store does not sync its writes: ddblocal's
				// like it is data-nosync
				stores = append(stores, "data-nosync")
			}
			for _, store := range stores {
				b.Run(store, func(b *testing.B) {
					data := "-"
					switch store {
					case "data":
						data = b.TempDir()
					case "data-nosync":
						data = cpuNoSyncPrefix + b.TempDir()
					}
					srv := sv.start(b, data)
					defer srv.stop()
					c := cpuClient(srv.endpoint)
					ctx := context.Background()
					if _, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("cpu"), BillingMode: types.BillingModePayPerRequest,
						AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
							{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeN}},
						KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
							{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}}}); err != nil {
						b.Fatal(err)
					}
					for i := 0; ; i++ {
						d, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("cpu")})
						if err == nil && d.Table.TableStatus == types.TableStatusActive {
							break
						}
						if i == 200 {
							b.Fatalf("table never became ACTIVE: %v", err)
						}
						time.Sleep(10 * time.Millisecond)
					}
					for i := range 200 {
						if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("cpu"), Item: cpuItem("g", i)}); err != nil {
							b.Fatal(err)
						}
					}
					b.Run("PutItem", func(b *testing.B) {
						cpuWorkers(b, srv, func(c *dynamodb.Client, w, i int) error {
							_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("cpu"), Item: cpuItem(fmt.Sprintf("w%d", w), i)})
							return err
						})
					})
					b.Run("GetItem", func(b *testing.B) {
						cpuWorkers(b, srv, func(c *dynamodb.Client, w, i int) error {
							out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("cpu"), ConsistentRead: aws.Bool(true),
								Key: map[string]types.AttributeValue{"pk": s("g"), "sk": n(strconv.Itoa((i + 200) % 200))}})
							if err == nil && out.Item == nil {
								err = fmt.Errorf("GetItem found no item")
							}
							return err
						})
					})
				})
			}
		})
	}
}
