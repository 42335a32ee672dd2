package kinesis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// TargetPrefix is the X-Amz-Target prefix of the Kinesis API.
const TargetPrefix = "Kinesis_20131202."

type handler func(r *Registry, ctx context.Context, body []byte) (any, error)

var handlers = map[string]handler{
	"CreateStream":          (*Registry).createStreamOp,
	"DeleteStream":          (*Registry).deleteStreamOp,
	"DescribeStream":        (*Registry).describeStreamOp,
	"DescribeStreamSummary": (*Registry).describeStreamSummaryOp,
	"ListStreams":           (*Registry).listStreamsOp,
	"ListShards":            (*Registry).listShardsOp,
	"PutRecord":             (*Registry).putRecordOp,
	"PutRecords":            (*Registry).putRecordsOp,
	"GetShardIterator":      (*Registry).getShardIteratorOp,
	"GetRecords":            (*Registry).getRecordsOp,
	"SplitShard":            (*Registry).splitShardOp,
	"MergeShards":           (*Registry).mergeShardsOp,
}

// Supported reports whether op (without the target prefix) is a Kinesis
// operation the registry serves.
func Supported(op string) bool { _, ok := handlers[op]; return ok }

// Handle serves one Kinesis operation (op may carry TargetPrefix) from its
// JSON request body and returns the JSON response body, or an
// *apierr.Error whose Code is Kinesis's exception name.
func (r *Registry) Handle(ctx context.Context, op string, body []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("kinesis: %s: %w", op, err)
	}
	op = strings.TrimPrefix(op, TargetPrefix)
	h, ok := handlers[op]
	if !ok {
		return nil, apierr.New("UnknownOperationException", 400, "")
	}
	if len(body) == 0 {
		body = []byte("{}")
	}
	out, err := h(r, ctx, body)
	if err != nil {
		if errors.Is(err, ErrFailed) {
			return nil, apierr.New("InternalFailure", 500, "%v", err)
		}
		var ae *apierr.Error
		if !errors.As(err, &ae) {
			return nil, apierr.New("InternalFailure", 500, "Internal service failure (%v)", err)
		}
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, apierr.New("InternalFailure", 500, "encoding the %s response: %v", op, err)
	}
	return b, nil
}

func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return apierr.New("SerializationException", 400, "class %s can not be converted to an %s", te.Value, te.Type)
		}
		return apierr.New("SerializationException", 400, "%v", err)
	}
	return nil
}

func invalidArg(format string, args ...any) *apierr.Error {
	return apierr.New("InvalidArgumentException", 400, format, args...)
}

// checks collects constraint violations into Kinesis's "N validation
// errors detected" ValidationException.
type checks struct{ errs []string }

func (c *checks) add(value any, field, constraint string) {
	v := "null"
	switch x := value.(type) {
	case nil:
	case *string:
		if x != nil {
			v = "'" + *x + "'"
		}
	case *int:
		if x != nil {
			v = fmt.Sprintf("'%d'", *x)
		}
	default:
		v = fmt.Sprintf("'%v'", x)
	}
	c.errs = append(c.errs, fmt.Sprintf("Value %s at '%s' failed to satisfy constraint: %s", v, field, constraint))
}

func (c *checks) err() error {
	switch len(c.errs) {
	case 0:
		return nil
	case 1:
		return apierr.Validation("1 validation error detected: %s", c.errs[0])
	}
	return apierr.Validation("%d validation errors detected: %s", len(c.errs), strings.Join(c.errs, "; "))
}

var (
	namePattern   = regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`)
	arnPattern    = regexp.MustCompile(`^arn:aws.*:kinesis:.*:\d{12}:stream/\S+$`)
	numberPattern = regexp.MustCompile(`^(0|([1-9]\d{0,128}))$`)
	hashPattern   = regexp.MustCompile(`^(0|([1-9]\d{0,38}))$`)
)

// name checks a stream or shard name field.
func (c *checks) name(v *string, field string, required bool) {
	if v == nil {
		if required {
			c.add(nil, field, "Member must not be null")
		}
		return
	}
	if len(*v) < 1 {
		c.add(v, field, "Member must have length greater than or equal to 1")
	} else if len(*v) > 128 {
		c.add(v, field, "Member must have length less than or equal to 128")
	}
	if !namePattern.MatchString(*v) {
		c.add(v, field, "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+")
	}
}

func (c *checks) arn(v *string) {
	if v == nil {
		return
	}
	if len(*v) < 1 || len(*v) > 2048 {
		c.add(v, "streamARN", "Member must have length between 1 and 2048")
	}
	if !arnPattern.MatchString(*v) {
		c.add(v, "streamARN", "Member must satisfy regular expression pattern: arn:aws.*:kinesis:.*:\\d{12}:stream/\\S+")
	}
}

func (c *checks) limit(v *int, field string, lo, hi int) {
	if v == nil {
		return
	}
	if *v < lo {
		c.add(v, field, fmt.Sprintf("Member must have value greater than or equal to %d", lo))
	} else if *v > hi {
		c.add(v, field, fmt.Sprintf("Member must have value less than or equal to %d", hi))
	}
}

func (c *checks) pattern(v *string, field string, re *regexp.Regexp, text string) {
	if v != nil && !re.MatchString(*v) {
		c.add(v, field, "Member must satisfy regular expression pattern: "+text)
	}
}

// streamRef is a request's StreamName and StreamARN.
type streamRef struct {
	StreamName *string
	StreamARN  *string
}

func (ref streamRef) check(c *checks) {
	c.name(ref.StreamName, "streamName", false)
	c.arn(ref.StreamARN)
}

// stream resolves the stream a request names by StreamName, StreamARN or
// both, as Kinesis accepts either.
func (r *Registry) stream(ref streamRef) (*stream, error) {
	var name string
	switch {
	case ref.StreamName == nil && ref.StreamARN == nil:
		return nil, invalidArg("Either StreamName or StreamARN should be provided.")
	case ref.StreamARN != nil:
		i := strings.LastIndex(*ref.StreamARN, ":stream/")
		name = (*ref.StreamARN)[i+len(":stream/"):]
		if ref.StreamName != nil && *ref.StreamName != name {
			return nil, invalidArg("StreamARN %s and StreamName %s do not name the same stream.", *ref.StreamARN, *ref.StreamName)
		}
		if *ref.StreamARN != r.arnOf(name) {
			return nil, r.notFound(name)
		}
	default:
		name = *ref.StreamName
	}
	s := r.lookup(name)
	if s == nil {
		return nil, r.notFound(name)
	}
	return s, nil
}
