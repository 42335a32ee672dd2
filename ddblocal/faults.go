package ddblocal

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// Fault codes understood by FaultConfig. Besides the error codes, the
// pseudo-code FaultUnprocessed makes BatchGetItem / BatchWriteItem leave
// each key or request unprocessed with the given probability (even all of
// them; DynamoDB would then rather fail the whole call with
// ProvisionedThroughputExceededException, which a rate of that code on the
// operation injects).
const (
	FaultThroughput          = "ProvisionedThroughputExceededException"
	FaultThrottling          = "ThrottlingException"
	FaultTransactionConflict = "TransactionConflictException"
	FaultInternal            = "InternalServerError"
	FaultUnprocessed         = "Unprocessed"
)

// FaultConfig injects failures; the zero value injects none.
//
// Rates maps an operation ("PutItem", "TransactWriteItems",
// "DynamoDBStreams.GetRecords", "Kinesis.GetRecords", or "*" for every operation) to error codes
// and their probability per request. Script makes the next requests of an
// operation fail, in order, before any rate applies. Latency delays every
// request. Seed makes the random choices repeatable (0: a fixed default).
//
// TransactionConflictException on TransactWriteItems or TransactGetItems is
// sent the way DynamoDB sends it: a TransactionCanceledException whose first
// reason is TransactionConflict (the others None).
//
// StaleReads makes eventually consistent reads behave like DynamoDB's at
// their worst: a GetItem or BatchGetItem without ConsistentRead of an item
// written less than StaleReads ago returns the item as it was before that
// write (or no item); an eventually consistent Query of the table or of a
// local index, and any Query of a global index (index propagation lag), sees
// such items as they were before that write. Strongly consistent reads are
// never stale; Scan is never stale.
type FaultConfig struct {
	Rates      map[string]map[string]float64
	Script     []ScriptedFault
	Latency    time.Duration
	Seed       int64
	StaleReads time.Duration
}

// ScriptedFault makes the next request of Op ("*" for any) fail with Code.
type ScriptedFault struct {
	Op   string
	Code string
}

type faultState struct {
	// none is set while the configuration injects nothing: before is then
	// free of the lock every request would take.
	none   atomic.Bool
	mu     sync.Mutex
	cfg    FaultConfig
	script []ScriptedFault
	rng    *rand.Rand
}

func newFaultState(cfg FaultConfig) *faultState {
	f := &faultState{}
	f.set(cfg)
	return f
}

func (f *faultState) set(cfg FaultConfig) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cfg = cfg
	f.none.Store(len(cfg.Script) == 0 && len(cfg.Rates) == 0 && cfg.Latency <= 0)
	f.script = append([]ScriptedFault(nil), cfg.Script...)
	f.rng = rand.New(rand.NewPCG(uint64(cfg.Seed), 0x9e3779b97f4a7c15))
}

// SetFaults replaces the fault configuration at runtime (the zero
// FaultConfig turns faults off).
func (s *Server) SetFaults(cfg FaultConfig) { s.faults.set(cfg) }

// before runs before an operation: latency, then a scripted or random
// fault (nil when none).
func (f *faultState) before(ctx context.Context, op string, body []byte) error {
	if f.none.Load() {
		return nil
	}
	f.mu.Lock()
	lat := f.cfg.Latency
	code := ""
	for i, sf := range f.script {
		if sf.Op == op || sf.Op == "*" {
			code = sf.Code
			f.script = append(f.script[:i], f.script[i+1:]...)
			break
		}
	}
	if code == "" {
		for _, key := range []string{op, "*"} {
			rates := f.cfg.Rates[key]
			for _, c := range sortedNames(rates) { // sorted: repeatable with a Seed
				if p := rates[c]; c != FaultUnprocessed && p > 0 && f.rng.Float64() < p {
					code = c
					break
				}
			}
			if code != "" {
				break
			}
		}
	}
	f.mu.Unlock()
	if err := sleepCtx(ctx, lat); err != nil {
		return err
	}
	if code == "" {
		return nil
	}
	return faultError(op, code, body)
}

// unprocessed reports whether one batch element should be left unprocessed.
func (f *faultState) unprocessed(op string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.cfg.Rates[op][FaultUnprocessed]
	return p > 0 && f.rng.Float64() < p
}

func faultError(op, code string, body []byte) error {
	switch code {
	case FaultThroughput:
		return apierr.New(code, 400, "The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.")
	case FaultThrottling:
		return apierr.New(code, 400, "Rate of requests exceeds the allowed throughput.")
	case FaultInternal:
		return apierr.New(code, 500, "Internal server error")
	case FaultTransactionConflict, "TransactionConflict":
		if op == "TransactWriteItems" || op == "TransactGetItems" {
			var in struct{ TransactItems []json.RawMessage }
			_ = json.Unmarshal(body, &in)
			reasons := make([]apierr.CancellationReason, max(1, len(in.TransactItems)))
			for i := range reasons {
				reasons[i].Code = "None"
			}
			reasons[0] = apierr.CancellationReason{Code: "TransactionConflict", Message: "Transaction is ongoing for the item"}
			return canceled(reasons)
		}
		return apierr.New(FaultTransactionConflict, 400, "Transaction is ongoing for the item")
	}
	status := 400
	if code == "ServiceUnavailable" {
		status = 503
	}
	return apierr.New(code, status, "Injected fault")
}

// staleWindow is the StaleReads duration in force.
func (f *faultState) staleWindow() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cfg.StaleReads
}

// staleRead reports whether a read may be stale: eventually consistent
// while FaultConfig.StaleReads is on.
func (s *Server) staleRead(consistent bool) bool {
	return !consistent && s.faults.staleWindow() > 0
}
