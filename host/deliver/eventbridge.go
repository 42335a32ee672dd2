package deliver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/dynafold/dynafold/abi"
)

// EventBridgeAPI is the one method of *eventbridge.Client an EventBridge
// target uses.
type EventBridgeAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, optFns ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// DefaultSource is the Source of the events an EventBridge target puts when
// EventBridgeOptions.Source is empty.
const DefaultSource = "dynafold"

// DefaultDetailType is the detail-type of an effect that has no "_tag" when
// EventBridgeOptions.DetailType is empty.
const DefaultDetailType = "dynafold.effect"

// EventBridgeOptions configures an EventBridge target. The zero value puts
// events on the account's default bus.
type EventBridgeOptions struct {
	// EventBus is the bus's name or ARN; empty means the default bus.
	EventBus string
	// Source of every event; empty means DefaultSource.
	Source string
	// DetailType of every event. Empty means the effect's own "_tag" (an S
	// attribute of an M effect, as events carry their type), or
	// DefaultDetailType for an effect without one.
	DetailType string
	// Encoding of the event's Detail; Plain by default.
	Encoding Encoding
}

// EventBridge delivers an effect with PutEvents, one entry: Detail is the
// effect's JSON form, Source and DetailType as EventBridgeOptions says. An
// entry EventBridge reports as failed (FailedEntryCount > 0) is an error
// naming its ErrorCode and ErrorMessage: retryable for throttling and
// internal failures, permanent for the others (a malformed detail, denied
// access). Call errors are classified as for every target (see Error). An
// EventBridge target is safe for concurrent use when its client is.
type EventBridge struct {
	client EventBridgeAPI
	dest   string
	opts   EventBridgeOptions
}

// NewEventBridge returns an EventBridge target putting events through
// client, usually an *eventbridge.Client configured as usual.
func NewEventBridge(client EventBridgeAPI, o EventBridgeOptions) (*EventBridge, error) {
	dest := o.EventBus
	if dest == "" {
		dest = "default"
	}
	if client == nil {
		return nil, fmt.Errorf("eventbridge target %s: nil client: pass an *eventbridge.Client", dest)
	}
	if err := checkEncoding(o.Encoding); err != nil {
		return nil, fmt.Errorf("eventbridge target %s: %w", dest, err)
	}
	if o.Source == "" {
		o.Source = DefaultSource
	}
	return &EventBridge{client: client, dest: "bus " + dest, opts: o}, nil
}

// Deliver puts e on the bus; see EventBridge.
func (t *EventBridge) Deliver(ctx context.Context, e Effect) error {
	detail, err := e.JSON(t.opts.Encoding)
	if err != nil {
		return newError("eventbridge", t.dest, e, true, err)
	}
	entry := types.PutEventsRequestEntry{
		Source:     aws.String(t.opts.Source),
		DetailType: aws.String(t.detailType(e)),
		Detail:     aws.String(string(detail)),
	}
	if t.opts.EventBus != "" {
		entry.EventBusName = aws.String(t.opts.EventBus)
	}
	out, err := t.client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{entry}})
	if err != nil {
		return sdkError("eventbridge", t.dest, e, err)
	}
	if out.FailedEntryCount == 0 {
		return nil
	}
	code, msg := "", "no entry reported why"
	if len(out.Entries) > 0 {
		code, msg = aws.ToString(out.Entries[0].ErrorCode), aws.ToString(out.Entries[0].ErrorMessage)
	}
	de := newError("eventbridge", t.dest, e, !retryableEntryCode(code), errors.New("PutEvents entry failed: "+msg))
	de.Code = code
	return de
}

// detailType returns the detail-type of e's event; see EventBridgeOptions.
func (t *EventBridge) detailType(e Effect) string {
	if t.opts.DetailType != "" {
		return t.opts.DetailType
	}
	if e.Value.Kind == abi.KindM {
		if tag := e.Value.Map["_tag"]; tag.Kind == abi.KindS && tag.Str != "" {
			return tag.Str
		}
	}
	return DefaultDetailType
}

// retryableEntryCode reports whether a PutEvents entry that failed with code
// may succeed when put again: throttling and EventBridge's internal failures.
func retryableEntryCode(code string) bool {
	switch code {
	case "", "InternalFailure", "InternalException", "ServiceUnavailable":
		return true
	}
	return strings.Contains(code, "Throttl")
}
