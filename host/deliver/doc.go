// Package deliver holds the delivery targets of the outbox: where the host
// hands an effect once the row that produced it is committed. Each target
// implements Target, one method:
//
//	Deliver(ctx context.Context, e Effect) error
//
// The package provides Func (a Go callback), Webhook (HTTP POST), SQS
// (SendMessage) and EventBridge (PutEvents). The drainer calls a target for
// the head effect of a row, and deletes the effect only when Deliver returns
// nil; an error leaves the effect at the head, to be delivered again by the
// next drain. Delivery is therefore at least once, and a consumer
// deduplicates on the effect's idempotency key (Effect.IdempotencyKey).
//
// # Errors
//
// A target's error is a *Error naming the target, the destination and the
// effect, and what to do. errors.Is(err, ErrPermanent) reports an error that
// retrying will not fix (an HTTP 4xx other than 408 and 429, a service's
// validation or access error): the effect, or the target's configuration,
// must change. Every other error is retryable: a 5xx, a 408 or 429, a
// throttled or timed-out call, a network failure. A Func callback marks its
// own permanent errors with Permanent.
//
// # JSON form of an effect
//
// Webhook posts, SQS sends and EventBridge puts an effect as one JSON object
// (Effect.MarshalJSON):
//
//	{
//	  "idempotencyKey": "9f86d08…",         // Effect.IdempotencyKey, 64 hex digits
//	  "projection": "shipments",           // omitted when empty
//	  "stream": "Order",                   // the event's stream
//	  "streamId": "o-1",                   // the event's stream instance
//	  "version": 3,                        // the event's version
//	  "index": 0,                          // the effect's index among its event's effects
//	  "key": {"pk": "SHIP#s-1"},           // the row's primary key
//	  "effect": {"kind": "at Hamburg", "parcels": 2}
//	}
//
// With the default encoding, Plain, the row key and the effect are plain
// JSON: S is a string, N a JSON number written with exactly the digits
// DynamoDB holds (never through float64: decode it with json.Number,
// Decoder.UseNumber, or a big-decimal parser), B a base64 string, BOOL a
// boolean, NULL null, M an object with sorted names, L an array, SS an array
// of strings, NS an array of numbers and BS an array of base64 strings. Plain
// JSON does not tell B from S, nor a set from a list. DynamoDBJSON writes
// "key" and "effect" in DynamoDB JSON instead ({"S":"x"}, {"N":"3"},
// {"M":{…}}), which keeps every type, and every number as a string.
package deliver
