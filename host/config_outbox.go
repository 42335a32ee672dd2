package host

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/outbox"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
)

// DefaultOutboxKey is the key of an outbox table of its own.
var DefaultOutboxKey = []string{"pk", "sk"}

// DefaultOutboxIndexBuckets is outbox.indexBuckets when absent.
const DefaultOutboxIndexBuckets = apply.DefaultIndexBuckets

// MaxOutboxIndexBuckets bounds outbox.indexBuckets.
const MaxOutboxIndexBuckets = apply.MaxIndexBuckets

// DefaultClaimFor is how long a drainer holds an effect it is delivering
// before another drainer may take it over.
const DefaultClaimFor = outbox.DefaultClaimFor

// OutboxConfig makes a projection commit the side effects its plugin returns
// for applied events together with the row, and deliver them in order, at
// least once. It needs revision.
//
// By default the effects are stored in the row's own partition of the
// read-model table (the table needs a sort key), marked __edd_e__ =
// "<readModel.entityType>#outbox"; entity reads never see them. With Table
// they go to a table of their own, still in the same transaction.
type OutboxConfig struct {
	// Table, when set, is a table of its own for the effects (keyed by Key).
	Table string `json:"table,omitempty"`
	// Key is Table's key attributes, hash then range (default
	// DefaultOutboxKey); only with Table.
	Key []string `json:"key,omitempty"`
	// Index names the sparse global secondary index (on __edd_ob_pk and
	// __edd_ob_sk, which only effects carry) that drain-pending reads to
	// find rows with pending effects. `host tables create` creates it.
	Index string `json:"index,omitempty"`
	// IndexBuckets is how many index hash keys the projection's pending
	// effects are spread over (default DefaultOutboxIndexBuckets, at most
	// MaxOutboxIndexBuckets), so that no one index partition takes every
	// effect write; a row's effects share one bucket. drain-pending
	// queries every bucket in parallel. Raise it freely; lower it only
	// while no effects are pending (those in the dropped buckets would wait
	// for their rows' next write or an explicit drain).
	IndexBuckets int `json:"indexBuckets,omitempty"`
	// ClaimFor is how long a drainer holds the effect it is delivering
	// (default DefaultClaimFor): a crashed drainer's effect is delivered
	// again once its claim expires.
	ClaimFor Duration `json:"claimFor,omitempty"`
	// Deliver, when set, is where effects are delivered right after each
	// row write, and by `host drain` / `host drain-pending`.
	Deliver *DeliverConfig `json:"deliver,omitempty"`
}

// DeliverConfig names one delivery target. The AWS clients read the usual
// AWS configuration (region, credentials, AWS_ENDPOINT_URL_SQS,
// AWS_ENDPOINT_URL_EVENTBRIDGE).
type DeliverConfig struct {
	// Webhook POSTs each effect as JSON to a URL, with an Idempotency-Key
	// header.
	Webhook *WebhookConfig `json:"webhook,omitempty"`
	// SQS sends each effect as a message to a queue (a FIFO queue keeps each
	// row's effects in order).
	SQS *SQSConfig `json:"sqs,omitempty"`
	// EventBridge puts each effect as an event on a bus.
	EventBridge *EventBridgeConfig `json:"eventBridge,omitempty"`
	// MaxInFlight caps the deliveries to the target in progress at once,
	// per host process (absent or 0: no cap); more wait for a slot.
	MaxInFlight int `json:"maxInFlight,omitempty"`
	// Breaker, when set (even empty: {}), puts a circuit breaker in front
	// of the target (see BreakerConfig).
	Breaker *BreakerConfig `json:"breaker,omitempty"`
}

// WebhookConfig is an HTTP webhook target.
type WebhookConfig struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"` // extra headers, e.g. Authorization
	Timeout Duration          `json:"timeout,omitempty"` // one delivery's bound (default 10s)
}

// SQSConfig is an SQS target.
type SQSConfig struct {
	QueueURL string `json:"queueUrl"`
}

// EventBridgeConfig is an EventBridge target.
type EventBridgeConfig struct {
	Bus        string `json:"bus,omitempty"`        // name or ARN (default: the default bus)
	Source     string `json:"source,omitempty"`     // default "dynafold"
	DetailType string `json:"detailType,omitempty"` // default: the effect's _tag
}

// claimFor returns ClaimFor or its default.
func (o *OutboxConfig) claimFor() time.Duration {
	if o.ClaimFor > 0 {
		return time.Duration(o.ClaimFor)
	}
	return DefaultClaimFor
}

// engineOutbox returns the engine's outbox configuration.
func (o *OutboxConfig) engineOutbox(entityType string) *apply.Outbox {
	out := &apply.Outbox{EntityType: entityType, Table: o.Table, Index: o.Index, IndexBuckets: o.IndexBuckets}
	if o.Table != "" {
		out.KeyAttrs = slices.Clone(o.Key)
		if len(out.KeyAttrs) == 0 {
			out.KeyAttrs = slices.Clone(DefaultOutboxKey)
		}
	}
	return out
}

// validate checks the outbox of projection p at path.
func (o *OutboxConfig) validate(ps *problems, path string, p *ProjectionConfig, key []string) {
	if p.Revision == nil {
		ps.add(path, "needs revision: the revision orders a row's effects across writes; set revision, e.g. {\"field\": \"revision\"}")
	}
	if o.Table == "" && len(key) < 2 {
		ps.add(path+".table", "is required: the read-model table %v has no sort key, so effects cannot share the row's partition; name a table of their own", key)
	}
	if o.Table == "" && len(o.Key) > 0 {
		ps.add(path+".key", "is set but outbox.table is not: it keys an outbox table of its own; set outbox.table or remove outbox.key")
	}
	if len(o.Key) != 0 && len(o.Key) != 2 {
		ps.add(path+".key", "lists %d attributes: an outbox table is keyed by 2, hash then range (absent: %q)", len(o.Key), DefaultOutboxKey)
	}
	checkNames(ps, path+".key", o.Key)
	switch {
	case o.IndexBuckets < 0 || o.IndexBuckets > MaxOutboxIndexBuckets:
		ps.add(path+".indexBuckets", "%d is out of range: use 1 to %d index hash keys (absent or 0: %d)", o.IndexBuckets, MaxOutboxIndexBuckets, DefaultOutboxIndexBuckets)
	case o.IndexBuckets != 0 && o.Index == "":
		ps.add(path+".indexBuckets", "is set but outbox.index is not: the buckets spread the sparse index's hash key; name outbox.index or remove outbox.indexBuckets")
	}
	if o.ClaimFor < 0 {
		ps.add(path+".claimFor", "%s is negative: use a duration longer than a delivery takes, such as \"30s\" (absent: %s)", o.ClaimFor, DefaultClaimFor)
	}
	if d := o.Deliver; d != nil {
		n := 0
		if w := d.Webhook; w != nil {
			n++
			if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				ps.add(path+".deliver.webhook.url", "%q is not an http:// or https:// URL, such as \"https://example.com/effects\"", w.URL)
			}
			if w.Timeout < 0 {
				ps.add(path+".deliver.webhook.timeout", "%s is negative: use a positive duration such as \"10s\"", w.Timeout)
			}
		}
		if q := d.SQS; q != nil {
			n++
			if q.QueueURL == "" {
				ps.add(path+".deliver.sqs.queueUrl", "is required: the queue's URL, e.g. https://sqs.us-east-1.amazonaws.com/123456789012/effects")
			}
		}
		if d.EventBridge != nil {
			n++
		}
		if n != 1 {
			ps.add(path+".deliver", "names %d targets: name exactly one of webhook, sqs, eventBridge", n)
		}
		d.validateProtection(ps, path+".deliver")
	}
}

// target builds the delivery target d names.
func (d *DeliverConfig) target(ctx context.Context, region string) (deliver.Target, error) {
	switch {
	case d.Webhook != nil:
		h := http.Header{}
		for k, v := range d.Webhook.Headers {
			h.Set(k, v)
		}
		return deliver.NewWebhook(d.Webhook.URL, deliver.WebhookOptions{Header: h, Timeout: time.Duration(d.Webhook.Timeout)})
	case d.SQS != nil, d.EventBridge != nil:
		var loads []func(*config.LoadOptions) error
		if region != "" {
			loads = append(loads, config.WithRegion(region))
		}
		cfg, err := config.LoadDefaultConfig(ctx, loads...)
		if err != nil {
			return nil, fmt.Errorf("delivery target: load AWS config: %w", err)
		}
		if d.SQS != nil {
			return deliver.NewSQS(sqs.NewFromConfig(cfg), d.SQS.QueueURL, deliver.SQSOptions{})
		}
		eb := d.EventBridge
		return deliver.NewEventBridge(eventbridge.NewFromConfig(cfg), deliver.EventBridgeOptions{EventBus: eb.Bus, Source: eb.Source, DetailType: eb.DetailType})
	}
	return nil, fmt.Errorf("delivery target: name one of webhook, sqs, eventBridge")
}

// outboxTables adds what projection p's outbox needs to the table specs: its
// index on the read-model table (the last spec), or a table of its own with
// the index.
func outboxTables[W any](specs []W, p ProjectionConfig, mk func(string, dynamo.TableSpec) W, spec func(*W) *dynamo.TableSpec) []W {
	o := p.Outbox
	if o == nil {
		return specs
	}
	var ix []dynamo.IndexSpec
	if o.Index != "" {
		ix = []dynamo.IndexSpec{{Name: o.Index, KeyAttrs: []string{apply.OutboxIndexPK, apply.OutboxIndexSK}}}
	}
	if o.Table == "" {
		last := spec(&specs[len(specs)-1])
		last.Indexes = append(last.Indexes, ix...)
		return specs
	}
	key := o.Key
	if len(key) == 0 {
		key = DefaultOutboxKey
	}
	return append(specs, mk("outbox of projection "+p.Name, dynamo.TableSpec{Name: o.Table, KeyAttrs: key, Indexes: ix}))
}

// mergeIndexes returns spec's indexes and those of the later specs of the
// same table (projections sharing a read-model table), each name once.
func mergeIndexes[W any](spec dynamo.TableSpec, later []W, specOf func(W) dynamo.TableSpec) []dynamo.IndexSpec {
	out := slices.Clone(spec.Indexes)
	seen := map[string]bool{}
	for _, ix := range out {
		seen[ix.Name] = true
	}
	for _, w := range later {
		if s := specOf(w); s.Name == spec.Name {
			for _, ix := range s.Indexes {
				if !seen[ix.Name] {
					seen[ix.Name] = true
					out = append(out, ix)
				}
			}
		}
	}
	return out
}
