package ddblocal

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/wire"
)

func init() {
	register("TransactWriteItems", transactWriteItems)
	register("TransactGetItems", transactGetItems)
}

const (
	maxTxItems    = 100
	maxTxBytes    = 4 << 20
	idemWindow    = 10 * time.Minute
	txConflictMsg = "Transaction request cannot include multiple operations on one item"
)

type txPut struct {
	TableName                           string
	Item                                wire.RequestItem
	ConditionExpression                 *string
	ReturnValuesOnConditionCheckFailure string
	exprInput
}

type txKeyOp struct {
	TableName                           string
	Key                                 wire.RequestItem
	ConditionExpression                 *string
	UpdateExpression                    *string
	ReturnValuesOnConditionCheckFailure string
	exprInput
}

type transactWriteInput struct {
	TransactItems      []txItem
	ClientRequestToken *string
	rccInput
}

// txItem is one of TransactItems: one of its members is set.
type txItem struct {
	Put            *txPut
	Delete         *txKeyOp
	Update         *txKeyOp
	ConditionCheck *txKeyOp
}

// canceled builds a TransactionCanceledException.
func canceled(reasons []apierr.CancellationReason) error {
	codes := make([]string, len(reasons))
	for i, r := range reasons {
		codes[i] = r.Code
	}
	return &apierr.Error{Code: "TransactionCanceledException", Status: 400, Reasons: reasons,
		Message: "Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(codes, ", ") + "]"}
}

// lockTables write-locks (or read-locks) the distinct tables in name order
// and returns the unlock function.
func lockTables(ts []*table, write bool) func() {
	uniq := map[*table]bool{}
	var order []*table
	for _, t := range ts {
		if !uniq[t] {
			uniq[t] = true
			order = append(order, t)
		}
	}
	sort.Slice(order, func(i, j int) bool { return order[i].name < order[j].name })
	for _, t := range order {
		if write {
			t.mu.Lock()
		} else {
			t.mu.RLock()
		}
	}
	return func() {
		for i := len(order) - 1; i >= 0; i-- {
			if write {
				order[i].mu.Unlock()
			} else {
				order[i].mu.RUnlock()
			}
		}
	}
}

func transactWriteItems(s *Server, ctx context.Context, body []byte) (any, error) {
	var in transactWriteInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	var c constraintErrors
	if in.TransactItems == nil {
		c.add("Value null at 'transactItems' failed to satisfy constraint: Member must not be null")
	} else if len(in.TransactItems) == 0 {
		c.add("Value '[]' at 'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1")
	} else if len(in.TransactItems) > maxTxItems {
		c.add("Value '[...]' at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100")
	}
	if in.ClientRequestToken != nil && (len(*in.ClientRequestToken) < 1 || len(*in.ClientRequestToken) > 36) {
		c.add("Value '" + *in.ClientRequestToken + "' at 'clientRequestToken' failed to satisfy constraint: Member must have length less than or equal to 36")
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	if err := checkRCC(in.ReturnConsumedCapacity); err != nil {
		return nil, err
	}
	ops := make([]*writeOp, len(in.TransactItems))
	seen := map[string]bool{}
	for i, ti := range in.TransactItems {
		n := 0
		for _, set := range []bool{ti.Put != nil, ti.Delete != nil, ti.Update != nil, ti.ConditionCheck != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			return nil, apierr.Validation("TransactItems can only contain one of Check, Put, Update or Delete")
		}
		var w *writeOp
		var err error
		switch {
		case ti.Put != nil:
			w, err = s.preparePut(ti.Put.TableName, ti.Put.Item, ti.Put.ConditionExpression, ti.Put.exprInput, ti.Put.ReturnValuesOnConditionCheckFailure)
		case ti.Delete != nil:
			d := ti.Delete
			w, err = s.prepareKeyOp(opDelete, d.TableName, d.Key, d.ConditionExpression, nil, d.exprInput, d.ReturnValuesOnConditionCheckFailure)
		case ti.Update != nil:
			u := ti.Update
			if u.UpdateExpression == nil {
				return nil, apierr.Validation("1 validation error detected: Value null at 'transactItems.%d.member.update.updateExpression' failed to satisfy constraint: Member must not be null", i+1)
			}
			w, err = s.prepareKeyOp(opUpdate, u.TableName, u.Key, u.ConditionExpression, u.UpdateExpression, u.exprInput, u.ReturnValuesOnConditionCheckFailure)
		default:
			cc := ti.ConditionCheck
			if cc.ConditionExpression == nil {
				return nil, apierr.Validation("1 validation error detected: Value null at 'transactItems.%d.member.conditionCheck.conditionExpression' failed to satisfy constraint: Member must not be null", i+1)
			}
			w, err = s.prepareKeyOp(opCheck, cc.TableName, cc.Key, cc.ConditionExpression, nil, cc.exprInput, cc.ReturnValuesOnConditionCheckFailure)
		}
		if err != nil {
			return nil, err
		}
		id := w.t.name + "\x00" + string(encodeKey(w.t, w.key))
		if seen[id] {
			return nil, apierr.Validation(txConflictMsg)
		}
		seen[id] = true
		ops[i] = w
	}
	total := 0
	for _, w := range ops {
		if w.kind == opPut {
			total += itemSize(w.item)
		} else {
			total += itemSize(w.key)
		}
	}
	if total > maxTxBytes {
		return nil, apierr.Validation("Collection size of items exceeded, which can also be caused by the aggregate size of the items in the transaction exceeding the 4MB limit")
	}
	var digest uint64
	if in.ClientRequestToken != nil {
		digest = requestDigest(body)
	}
	tables := make([]*table, len(ops))
	for i, w := range ops {
		tables[i] = w.t
	}
	refs := make([]itemRef, len(ops))
	for i, w := range ops {
		refs[i] = itemRef{w.t, w.key}
	}
	done := false
	changes := make([]change, len(ops))
	// with a data dir, the token is stored with the writes (tok) and
	// remembered as of the commit's time
	var tok *txToken
	tokFn := func() *txToken {
		if in.ClientRequestToken == nil || done {
			return nil
		}
		tok = &txToken{token: *in.ClientRequestToken, digest: digest}
		return tok
	}
	err := s.writeTok(tables, refs, nil, tokFn, func() ([]change, error) {
		for _, t := range tables {
			if t.deleted {
				return nil, errGone
			}
		}
		if in.ClientRequestToken != nil {
			if d, err := s.idem.check(*in.ClientRequestToken, digest, s.now()); d || err != nil {
				done = d
				return nil, err
			}
		}
		reasons := make([]apierr.CancellationReason, len(ops))
		failed := false
		for i, w := range ops {
			reasons[i].Code = "None"
			ch, err := w.eval()
			var h *hoisted
			if errors.As(err, &h) {
				return nil, h.err
			}
			if err != nil {
				failed = true
				var cf *condFailure
				if errors.As(err, &cf) {
					reasons[i] = apierr.CancellationReason{Code: "ConditionalCheckFailed", Message: "The conditional request failed"}
					if w.returnRV && cf.old != nil {
						reasons[i].Item = wire.Item(cf.old)
					}
					continue
				}
				reasons[i] = apierr.CancellationReason{Code: "ValidationError", Message: errMessage(err)}
				continue
			}
			changes[i] = ch
		}
		if failed {
			return nil, canceled(reasons)
		}
		return changes, nil
	}, func() {
		switch {
		case tok != nil:
			s.idem.store(tok.token, tok.digest, tok.at)
		case in.ClientRequestToken != nil && !done:
			s.idem.store(*in.ClientRequestToken, digest, s.now())
		}
	})
	if done || err != nil {
		if done {
			return map[string]any{}, err
		}
		return nil, err
	}
	out := map[string]any{}
	units := map[string]float64{}
	for _, c := range changes {
		units[c.t.name] += 2 * writeUnits(c.old, c.new)
	}
	if cc := consumedList(in.ReturnConsumedCapacity, units); cc != nil {
		out["ConsumedCapacity"] = cc
	}
	return out, nil
}

func errMessage(err error) string {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae.Message
	}
	return err.Error()
}

// txToken is a successful transaction's ClientRequestToken, the digest of
// its request, and when it was stored.
type txToken struct {
	token  string
	digest uint64
	at     time.Time
}

// idempotency remembers the ClientRequestTokens of successful
// TransactWriteItems for 10 minutes (with a data dir, they are stored too,
// with the transaction's writes, and remembered again at a start: see
// tokensBucket). Tokens are forgotten in the order
// they were stored, as their window ends: the memory held is the last
// window's tokens, and forgetting costs only the tokens forgotten.
type idempotency struct {
	mu     sync.Mutex
	tokens map[string]idemEntry
	order  []idemRef // tokens in the order stored, from head on
	head   int
}

type idemEntry struct {
	digest uint64
	at     time.Time
}

// idemRef is a stored token and when it was stored.
type idemRef struct {
	token string
	at    time.Time
}

func newIdempotency() *idempotency { return &idempotency{tokens: map[string]idemEntry{}} }

// check reports whether the token already succeeded with the same request
// (done) or with a different one (an IdempotentParameterMismatchException).
func (m *idempotency) check(token string, digest uint64, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.tokens[token]
	if !ok || now.Sub(e.at) >= idemWindow {
		return false, nil
	}
	if e.digest != digest {
		return false, apierr.New("IdempotentParameterMismatchException", 400, "Request parameters do not match the parameters of the previous request with the same client token.")
	}
	return true, nil
}

func (m *idempotency) store(token string, digest uint64, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for m.head < len(m.order) && now.Sub(m.order[m.head].at) >= idemWindow {
		r := m.order[m.head]
		if e, ok := m.tokens[r.token]; ok && e.at.Equal(r.at) { // not stored again since
			delete(m.tokens, r.token)
		}
		m.order[m.head] = idemRef{}
		m.head++
	}
	if m.head > 0 && m.head >= len(m.order)/2 {
		m.order = append(m.order[:0], m.order[m.head:]...)
		m.head = 0
	}
	m.tokens[token] = idemEntry{digest: digest, at: now}
	m.order = append(m.order, idemRef{token: token, at: now})
}
