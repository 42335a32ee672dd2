package swap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// DefaultPollInterval is how often an S3Source polls by default.
const DefaultPollInterval = 30 * time.Second

// S3Source is a plugin module stored as an object of an S3-compatible store
// (a versioned bucket, so earlier versions stay available for rollback),
// polled every Interval. Each poll is one GetObject with If-None-Match set
// to the last ETag seen, so an unchanged module is never downloaded again;
// the version id of what was downloaded names the candidate's origin.
type S3Source struct {
	client   *s3.Client
	bucket   string
	key      string
	interval time.Duration
	max      int64

	etag      string // of the last module downloaded, or refused for its size
	versionID string

	polls, downloads, notModified atomic.Uint64
}

var _ Source = (*S3Source)(nil)

// S3Option configures an S3Source.
type S3Option func(*S3Source)

// WithMaxObjectBytes sets the largest object the source downloads (0 or
// less: DefaultMaxModuleBytes); a larger one is refused (StepSource)
// without being read, once per version of the object.
func WithMaxObjectBytes(n int64) S3Option {
	return func(s *S3Source) {
		if n > 0 {
			s.max = n
		}
	}
}

// NewS3Source polls s3://bucket/key every interval (0: DefaultPollInterval).
func NewS3Source(client *s3.Client, bucket, key string, interval time.Duration, opts ...S3Option) *S3Source {
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	s := &S3Source{client: client, bucket: bucket, key: key, interval: interval, max: DefaultMaxModuleBytes}
	for _, o := range opts {
		o(s)
	}
	return s
}

// S3Stats are an S3Source's counters.
type S3Stats struct {
	Polls       uint64 // GetObject requests made
	Downloads   uint64 // modules downloaded (the object had changed)
	NotModified uint64 // polls answered 304 Not Modified
}

// Stats returns the source's counters.
func (s *S3Source) Stats() S3Stats {
	return S3Stats{Polls: s.polls.Load(), Downloads: s.downloads.Load(), NotModified: s.notModified.Load()}
}

// URL returns s3://bucket/key.
func (s *S3Source) URL() string { return "s3://" + s.bucket + "/" + s.key }

// Check implements Source.
func (s *S3Source) Check(ctx context.Context) (*Candidate, error) {
	in := &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key)}
	if s.etag != "" {
		in.IfNoneMatch = aws.String(s.etag)
	}
	s.polls.Add(1)
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		switch statusOf(err) {
		case http.StatusNotModified:
			s.notModified.Add(1)
			return nil, nil
		case http.StatusNotFound:
			return nil, nil
		}
		var nsk *types.NoSuchKey
		if errors.As(err, &nsk) {
			return nil, nil
		}
		return nil, fmt.Errorf("swap: GetObject %s: %w", s.URL(), err)
	}
	defer out.Body.Close()
	size := aws.ToInt64(out.ContentLength)
	var b []byte
	if size <= s.max { // a larger object is not read at all
		if b, err = io.ReadAll(io.LimitReader(out.Body, s.max+1)); err != nil {
			return nil, fmt.Errorf("swap: reading %s: %w", s.URL(), err)
		}
		size = max(size, int64(len(b)))
		s.downloads.Add(1)
	}
	etag, version := aws.ToString(out.ETag), aws.ToString(out.VersionId)
	if etag == s.etag && version == s.versionID {
		return nil, nil // a store that ignores If-None-Match
	}
	s.etag, s.versionID = etag, version // a refused version is not downloaded again
	origin := s.URL()
	if version != "" {
		origin += "?versionId=" + version
	}
	if size > s.max {
		return nil, &CandidateError{Origin: origin, Step: StepSource, Err: fmt.Errorf(
			"%w: the object is %d bytes or more, over the limit of %d bytes: a module that large is no plugin; raise hotSwap.maxModuleBytes if it is one",
			ErrSourceRefused, size, s.max)}
	}
	return &Candidate{Wasm: b, Origin: origin}, nil
}

// Wait implements Source: it sleeps one polling interval.
func (s *S3Source) Wait(ctx context.Context) error { return sleep(ctx, s.interval) }

// Close implements Source.
func (s *S3Source) Close() error { return nil }

func statusOf(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// RollbackS3 makes the newest earlier version of s3://bucket/key whose
// content differs from the current one the current version again (read by
// its version id and written back as a new version), so every S3Source
// polling the object swaps it in. It returns the version id put back and the
// new version's id.
func RollbackS3(ctx context.Context, client *s3.Client, bucket, key string) (from, to string, err error) {
	var versions []types.ObjectVersion
	in := &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), Prefix: aws.String(key)}
	for {
		out, err := client.ListObjectVersions(ctx, in)
		if err != nil {
			return "", "", fmt.Errorf("rollback: ListObjectVersions: %w", err)
		}
		for _, v := range out.Versions {
			if aws.ToString(v.Key) == key {
				versions = append(versions, v)
			}
		}
		if !aws.ToBool(out.IsTruncated) {
			break
		}
		in.KeyMarker, in.VersionIdMarker = out.NextKeyMarker, out.NextVersionIdMarker
	}
	sort.SliceStable(versions, func(i, j int) bool {
		if aws.ToBool(versions[i].IsLatest) != aws.ToBool(versions[j].IsLatest) {
			return aws.ToBool(versions[i].IsLatest)
		}
		return aws.ToTime(versions[i].LastModified).After(aws.ToTime(versions[j].LastModified))
	})
	if len(versions) == 0 {
		return "", "", fmt.Errorf("rollback: s3://%s/%s has no version", bucket, key)
	}
	cur := versions[0]
	for _, v := range versions[1:] {
		if aws.ToString(v.ETag) == aws.ToString(cur.ETag) {
			continue
		}
		got, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), VersionId: v.VersionId})
		if err != nil {
			return "", "", fmt.Errorf("rollback: GetObject version %s: %w", aws.ToString(v.VersionId), err)
		}
		b, err := io.ReadAll(got.Body)
		got.Body.Close()
		if err != nil {
			return "", "", fmt.Errorf("rollback: reading version %s: %w", aws.ToString(v.VersionId), err)
		}
		put, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(b)})
		if err != nil {
			return "", "", fmt.Errorf("rollback: PutObject: %w", err)
		}
		return aws.ToString(v.VersionId), aws.ToString(put.VersionId), nil
	}
	return "", "", fmt.Errorf("rollback: s3://%s/%s: %w", bucket, key, ErrNoHistory)
}
