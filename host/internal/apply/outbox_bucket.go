package apply

import (
	"hash/fnv"
	"strconv"
)

// DefaultIndexBuckets is how many sparse index hash keys a projection's
// pending effects are spread over when Outbox.IndexBuckets is 0.
const DefaultIndexBuckets = 16

// MaxIndexBuckets bounds Outbox.IndexBuckets: a sweep queries every bucket.
const MaxIndexBuckets = 1000

// IndexBucket returns the sparse index hash key of the effects of the row
// whose key string (internal/keys) is rowKey: "<projection>#<bucket>", the
// bucket a hash of the row's key modulo the layout's Buckets. Every effect
// of a row lands in one bucket.
func (l OutboxLayout) IndexBucket(rowKey string) string {
	return l.BucketKey(bucketOf(rowKey, l.Buckets))
}

// BucketKey returns the sparse index hash key of bucket b.
func (l OutboxLayout) BucketKey(b int) string {
	return l.Projection + "#" + strconv.Itoa(b)
}

// LegacyIndexKey is the index hash key of effects committed before the
// index was bucketed: the projection's name alone. A sweep reads it too,
// so those effects are still delivered.
func (l OutboxLayout) LegacyIndexKey() string { return l.Projection }

func bucketOf(rowKey string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(rowKey))
	return int(h.Sum32() % uint32(n))
}
