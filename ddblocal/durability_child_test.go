package ddblocal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/smithy-go"
	"github.com/dynafold/dynafold/internal/syncbuf"
)

// The child process of the durability tests: a ddblocal on the data dir
// named by durabilityDirEnv, its endpoint printed on stdout, serving until
// it is killed or its stdin closes (the parent test died).
const (
	durabilityDirEnv  = "DDBLOCAL_DURABILITY_CHILD_DIR"
	durabilitySeedEnv = "DDBLOCAL_DURABILITY_SEED"
	// durabilitySplitsEnv makes the child split its streams' shards, by
	// itself and at random (durability_shards_test.go).
	durabilitySplitsEnv = "DDBLOCAL_DURABILITY_SPLITS"
	helperTest          = "TestDurability_HelperProcess"
	// durabilityNoSyncEnv runs the child with Options.NoSync.
	durabilityNoSyncEnv = "DDBLOCAL_DURABILITY_NOSYNC"
	// durabilityCheckpointEnv makes the child checkpoint its log into the
	// data file every that many logged commits (kills land mid-checkpoint).
	durabilityCheckpointEnv = "DDBLOCAL_DURABILITY_CHECKPOINT"
)

func TestDurability_HelperProcess(t *testing.T) {
	dir := os.Getenv(durabilityDirEnv)
	if dir == "" {
		t.Skip("the child process of the durability tests (runs only with " + durabilityDirEnv + " set)")
	}
	opts := Options{
		DataDir:     dir,
		TTLInterval: -1,
		Logger:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		NoSync:      os.Getenv(durabilityNoSyncEnv) != "",
	}
	if v := os.Getenv(durabilityCheckpointEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			fmt.Printf("ERROR %s=%q: %v\n", durabilityCheckpointEnv, v, err)
			os.Exit(3)
		}
		logCheckpointRecords = n
	}
	splits := os.Getenv(durabilitySplitsEnv) != ""
	if splits {
		opts.Streams = splitStreamOptions
	}
	srv, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Printf("ERROR %v\n", err)
		os.Exit(3)
	}
	if splits {
		go restructureAtRandom(srv)
	}
	if os.Getenv(durabilityKinesisEnv) != "" {
		go restructureKinesisAtRandom(srv)
	}
	fmt.Printf("ENDPOINT %s\n", srv.Endpoint())
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// child is a running ddblocal child process.
type child struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	endpoint chan string // the endpoint, or "" if the child exited first
	stderr   *syncbuf.Buffer
	exited   chan struct{}
	failure  string // "ERROR ..." line of a child that could not start
}

// startChild re-executes the test binary as a ddblocal child on dir.
func startChild(t *testing.T, dir string, env ...string) *child {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("finding the test binary to re-execute: %v", err)
	}
	cmd := exec.Command(exe, "-test.run=^"+helperTest+"$", "-test.count=1", "-test.v=false")
	cmd.Env = append(append(os.Environ(), durabilityDirEnv+"="+dir), env...)
	c := &child{cmd: cmd, endpoint: make(chan string, 1), stderr: &syncbuf.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the ddblocal child: %v", err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if ep, ok := strings.CutPrefix(line, "ENDPOINT "); ok && !sent {
				c.endpoint <- ep
				sent = true
			}
			if strings.HasPrefix(line, "ERROR ") {
				c.failure = line
			}
		}
		if !sent {
			c.endpoint <- ""
		}
		_ = cmd.Wait()
		close(c.exited)
	}()
	return c
}

// wait returns the child's endpoint, or fails the test if it exited first.
func (c *child) wait(t *testing.T) string {
	t.Helper()
	select {
	case ep := <-c.endpoint:
		if ep == "" {
			<-c.exited
			t.Fatalf("the ddblocal child exited before serving: %s\nstderr:\n%s", c.failure, c.stderr.String())
		}
		return ep
	case <-time.After(20 * time.Second):
		c.kill()
		t.Fatalf("the ddblocal child did not start within 20s; stderr:\n%s", c.stderr.String())
	}
	return ""
}

// kill sends SIGKILL and waits for the child to be gone.
func (c *child) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.exited
	_ = c.stdin.Close()
}

// verifyClients are the clients of the verifying reads. Reads are
// idempotent, so a read that got no answer (a connection refused, reset or
// closed: the client-side race of net/http and the SDK,
// aws/aws-sdk-go-v2#2737, or a server that is not serving yet) is retried
// until the server answers, as a real reader keeps polling, bounded only by
// the caller's context (the test's deadline): a verification must not
// mistake a slow or busy moment for a lost record. Nothing the server
// answers is retried.
func verifyClients(endpoint string) (*dynamodb.Client, *dynamodbstreams.Client) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: time.Minute} // a guard against a hung request, not a bound on work
	creds := credentials.NewStaticCredentialsProvider("AKID", "secret", "")
	retryer := verifyRetryer
	return dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: creds, Retryer: retryer(), HTTPClient: hc}),
		dynamodbstreams.New(dynamodbstreams.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: creds, Retryer: retryer(), HTTPClient: hc})
}

// verifyRetryer retries, until the caller's context ends, a request the
// server never answered (see verifyClients).
func verifyRetryer() aws.Retryer {
	return retry.NewStandard(func(so *retry.StandardOptions) {
		so.MaxAttempts = math.MaxInt32 // the context bounds the attempts
		so.MaxBackoff = 100 * time.Millisecond
		so.RateLimiter = ratelimit.None
		so.Retryables = []retry.IsErrorRetryable{retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
			if unanswered(err) {
				return aws.TrueTernary
			}
			return aws.FalseTernary
		})}
	})
}

// unanswered reports whether err is a request the server never answered:
// the connection was refused, reset or closed under it. An error the
// server sent (an API error) is an answer.
func unanswered(err error) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	return errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.As(err, &ne)
}

func durabilityClients(endpoint string) (*dynamodb.Client, *dynamodbstreams.Client) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: time.Minute} // a guard against a hung request, not a bound on work
	creds := credentials.NewStaticCredentialsProvider("AKID", "secret", "")
	// One attempt: a retried write could be applied twice, and the test
	// must know exactly which writes the server acknowledged.
	return dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: creds, RetryMaxAttempts: 1, HTTPClient: hc}),
		dynamodbstreams.New(dynamodbstreams.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: creds, RetryMaxAttempts: 1, HTTPClient: hc})
}
