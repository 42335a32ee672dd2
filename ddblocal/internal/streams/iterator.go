package streams

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// Shard iterator types of GetShardIterator.
const (
	IterTrimHorizon = "TRIM_HORIZON"
	IterLatest      = "LATEST"
	IterAtSequence  = "AT_SEQUENCE_NUMBER"
	IterAfterSeq    = "AFTER_SEQUENCE_NUMBER"
)

// iterator is the decoded content of a shard iterator: the next sequence
// number to read in a shard of a stream, and when it was issued. Horizon
// marks a TRIM_HORIZON iterator not yet used: it reads from wherever the
// trim horizon is when it is used.
type iterator struct {
	Arn     string `json:"-"` // carried in clear before the payload
	Shard   string `json:"s"`
	Pos     uint64 `json:"p"`
	Horizon bool   `json:"h,omitempty"`
	Issued  int64  `json:"t"` // Unix nanoseconds
}

// encode returns the opaque iterator text: the stream ARN, then the rest in
// base64, as DynamoDB's iterators start with the ARN too.
func (it iterator) encode() string {
	b, _ := json.Marshal(it) // plain struct: never fails
	return it.Arn + "|1|" + base64.RawURLEncoding.EncodeToString(b)
}

func decodeIterator(s string) (iterator, error) {
	var it iterator
	bad := apierr.Validation("Invalid ShardIterator: %q", s)
	i := strings.LastIndexByte(s, '|')
	if i < 0 || !strings.HasSuffix(s[:i], "|1") {
		return it, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(s[i+1:])
	if err != nil {
		return it, bad
	}
	if err := json.Unmarshal(b, &it); err != nil || it.Shard == "" {
		return it, bad
	}
	it.Arn = strings.TrimSuffix(s[:i], "|1")
	return it, nil
}

func (it iterator) issued() time.Time { return time.Unix(0, it.Issued) }
