package host

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/dynafold/dynafold/host/deliver"
)

// BreakerConfig is a circuit breaker in front of a projection's delivery
// target (outbox.deliver.breaker): it opens after Failures deliveries in a
// row fail, or when FailureRate of the deliveries of a Window fail (once
// the window has MinDeliveries), and then refuses deliveries for Cooldown.
// A refused effect stays at the head of its row's outbox, in order: no
// record fails for it and nothing is lost. After the cooldown one delivery
// probes the destination: its success closes the breaker, and `host run`
// then delivers every row's pending effects (drain-pending); its failure
// opens it for another cooldown. Every field may be left out:
//
//	"breaker": {"failures": 5, "cooldown": "30s"}
type BreakerConfig struct {
	// Failures is how many deliveries in a row must fail to open it
	// (absent or 0: deliver.DefaultBreakerFailures).
	Failures int `json:"failures,omitempty"`
	// FailureRate, between 0 and 1, opens it when that share of a
	// window's deliveries failed (absent or 0: not by rate).
	FailureRate float64 `json:"failureRate,omitempty"`
	// Window is the window of FailureRate (default
	// deliver.DefaultBreakerWindow).
	Window Duration `json:"window,omitempty"`
	// MinDeliveries is how many deliveries a window needs before its
	// rate counts (default deliver.DefaultBreakerMinDeliveries).
	MinDeliveries int `json:"minDeliveries,omitempty"`
	// Cooldown is how long it stays open before a delivery probes the
	// destination (default deliver.DefaultBreakerCooldown).
	Cooldown Duration `json:"cooldown,omitempty"`
}

// validateProtection checks maxInFlight and the breaker of a delivery
// target at path.
func (d *DeliverConfig) validateProtection(ps *problems, path string) {
	if d.MaxInFlight < 0 {
		ps.add(path+".maxInFlight", "%d is negative: use 1 or more deliveries at once (absent or 0: no cap)", d.MaxInFlight)
	}
	b := d.Breaker
	if b == nil {
		return
	}
	if b.Failures < 0 {
		ps.add(path+".breaker.failures", "%d is negative: use 1 or more deliveries in a row (absent or 0: %d)", b.Failures, deliver.DefaultBreakerFailures)
	}
	if r := b.FailureRate; r < 0 || r > 1 || math.IsNaN(r) {
		ps.add(path+".breaker.failureRate", "%v is not a share: use a number above 0 and at most 1, such as 0.5 (absent or 0: not by rate)", r)
	}
	if b.Window < 0 {
		ps.add(path+".breaker.window", "%s is negative: use a positive duration such as \"1m\" (absent: %s)", b.Window, deliver.DefaultBreakerWindow)
	}
	if b.MinDeliveries < 0 {
		ps.add(path+".breaker.minDeliveries", "%d is negative: use 1 or more (absent or 0: %d)", b.MinDeliveries, deliver.DefaultBreakerMinDeliveries)
	}
	if b.Cooldown < 0 {
		ps.add(path+".breaker.cooldown", "%s is negative: use a positive duration such as \"30s\" (absent: %s)", b.Cooldown, deliver.DefaultBreakerCooldown)
	}
}

// protect wraps a projection's delivery target in the breaker and the
// in-flight cap its configuration names (outbox.deliver), keeping the
// breaker for Breakers; nil stays nil.
func (h *Host) protect(pc ProjectionConfig, t deliver.Target, o options) deliver.Target {
	d := pc.Outbox.Deliver
	if t == nil || d == nil || (d.Breaker == nil && d.MaxInFlight == 0) {
		return t
	}
	bo := deliver.BreakerOptions{Name: d.name(), MaxInFlight: d.MaxInFlight, Failures: -1, Now: o.now}
	if b := d.Breaker; b != nil {
		bo.Failures, bo.FailureRate, bo.Window = b.Failures, b.FailureRate, time.Duration(b.Window)
		bo.MinDeliveries, bo.Cooldown = b.MinDeliveries, time.Duration(b.Cooldown)
	} else {
		bo.Cooldown = time.Nanosecond // an in-flight cap alone never opens
	}
	log := h.log.With("projection", pc.Name, "target", bo.Name)
	bo.OnChange = func(from, to deliver.BreakerState) {
		switch to {
		case deliver.BreakerOpen:
			log.Warn("delivery breaker opened: effects stay in the outbox until the target recovers", "from", from.String())
		case deliver.BreakerClosed:
			log.Info("delivery breaker closed: delivering the pending effects", "from", from.String())
		default:
			log.Info("delivery breaker half-open: the next delivery probes the target")
		}
	}
	b := deliver.NewBreaker(t, bo)
	if h.breakers == nil {
		h.breakers = map[string]*deliver.Breaker{}
	}
	h.breakers[pc.Name] = b
	return b
}

// name is how errors and metrics name the target.
func (d *DeliverConfig) name() string {
	switch {
	case d.Webhook != nil:
		return "webhook " + d.Webhook.URL
	case d.SQS != nil:
		return "sqs " + d.SQS.QueueURL
	case d.EventBridge != nil:
		bus := d.EventBridge.Bus
		if bus == "" {
			bus = "default"
		}
		return "eventbridge " + bus
	}
	return "the delivery target"
}

// BreakerStatus is the breaker in front of one projection's delivery
// target.
type BreakerStatus struct {
	Projection string
	Target     string // "webhook https://…", "sqs …", "eventbridge BUS"
	deliver.BreakerStats
}

// Breakers returns the breakers of the projections' delivery targets
// (outbox.deliver.breaker or maxInFlight), in configuration order.
func (h *Host) Breakers() []BreakerStatus {
	var out []BreakerStatus
	for _, name := range h.order {
		if b := h.breakers[name]; b != nil {
			out = append(out, BreakerStatus{Projection: name, Target: b.Name(), BreakerStats: b.Stats()})
		}
	}
	return out
}

// ResumeDeliveries keeps the projections' breakers moving until ctx ends:
// while a breaker is open it waits for its cooldown, then drains the
// projection's pending effects (DrainPending), whose first delivery probes
// the target; once a probe closed it, that drain delivers every row's
// pending effects in order. Projections without a breaker or an outbox
// index are left alone. `host run` runs it beside the change-feed reader.
func (h *Host) ResumeDeliveries(ctx context.Context) error {
	var names []string
	for _, name := range h.order {
		if b := h.breakers[name]; b != nil && h.cfg.projection(name).Outbox.Index != "" {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		<-ctx.Done()
		return nil
	}
	opened := map[string]bool{} // seen not closed since the last drain
	for {
		wait := time.Duration(math.MaxInt64)
		now := h.opts.now()
		for _, name := range names {
			st := h.breakers[name].Stats()
			if st.State == deliver.BreakerClosed && !opened[name] {
				continue
			}
			if st.State == deliver.BreakerClosed {
				// closed since (by a probe, or a live delivery): what the
				// open breaker refused goes out now
				opened[name] = false
				if _, err := h.DrainPending(ctx, name, nil); err != nil && ctx.Err() == nil {
					h.log.Warn("draining the pending effects after the breaker closed failed", "projection", name, "err", err)
					opened[name] = true
				}
				continue
			}
			opened[name] = true
			if d := st.OpenUntil.Sub(now); st.State == deliver.BreakerOpen && d > 0 {
				wait = min(wait, d)
				continue
			}
			if _, err := h.DrainPending(ctx, name, nil); err != nil && ctx.Err() == nil {
				h.log.Warn("draining the pending effects after the breaker's cooldown failed; trying again after the next", "projection", name, "err", err)
			}
			wait = min(wait, h.breakers[name].Cooldown())
		}
		if wait == time.Duration(math.MaxInt64) {
			wait = time.Second // every breaker closed: look again soon
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// projection returns the configuration of the named projection (zero when
// none).
func (c *Config) projection(name string) ProjectionConfig {
	i := slices.IndexFunc(c.Projections, func(p ProjectionConfig) bool { return p.Name == name })
	if i < 0 {
		return ProjectionConfig{}
	}
	return c.Projections[i]
}
