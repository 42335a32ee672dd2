package swap_test

import (
	"strings"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host/swap"
)

// TestH4_SourceConfigValidateAndCheckEvery: a SourceConfig's durations are
// parsed by one function, with the field's name and what is allowed; an
// absent interval is the default, never a silent fallback from a bad one.
func TestH4_SourceConfigValidateAndCheckEvery(t *testing.T) {
	for _, tt := range []struct {
		sc   swap.SourceConfig
		want []string
	}{
		{swap.SourceConfig{S3: &swap.S3Config{Bucket: "b", Key: "k", Interval: "soon"}}, []string{"hotSwap.s3.interval", `"soon"`, `"30s"`}},
		{swap.SourceConfig{S3: &swap.S3Config{Bucket: "b", Key: "k", Interval: "-1s"}}, []string{"hotSwap.s3.interval", "negative"}},
		{swap.SourceConfig{Watch: true, Settle: "later"}, []string{"hotSwap.settle", `"later"`}},
		{swap.SourceConfig{S3: &swap.S3Config{Key: "k"}}, []string{"hotSwap.s3", "bucket and key are required"}},
		{swap.SourceConfig{Watch: true, S3: &swap.S3Config{Bucket: "b", Key: "k"}}, []string{"watch and s3"}},
		{swap.SourceConfig{Fixture: &swap.FixtureFiles{Events: "e.json"}}, []string{"hotSwap.fixture", "rows"}},
	} {
		err := tt.sc.Validate()
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: Validate = %v, want %q in it", tt.sc, err, w)
			}
		}
	}
	for _, tt := range []struct {
		sc   *swap.SourceConfig
		want time.Duration
	}{
		{nil, 0},
		{&swap.SourceConfig{Watch: true}, 0},
		{&swap.SourceConfig{S3: &swap.S3Config{Bucket: "b", Key: "k"}}, swap.DefaultPollInterval},
		{&swap.SourceConfig{S3: &swap.S3Config{Bucket: "b", Key: "k", Interval: "1h"}}, time.Hour},
	} {
		if err := tt.sc.Validate(); err != nil {
			t.Errorf("%+v: %v", tt.sc, err)
		}
		if got := tt.sc.CheckEvery(); got != tt.want {
			t.Errorf("%+v: CheckEvery = %s, want %s", tt.sc, got, tt.want)
		}
	}
}
