//go:build !wasip1

package examples_test

import (
	"path/filepath"
	"testing"

	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// tallyPath builds the tally test guest in Rust or C (sdk-guest/*/testdata):
// the AssemblyScript tally's projection on the Rust or C SDK.
func tallyPath(t *testing.T, lang string) string {
	sdk := filepath.Join(here(), "..", "..", "sdk-guest")
	if lang == "rust" {
		return wasmbuild.BuildRustPath(t, filepath.Join(sdk, "rust", "testdata", "tally"))
	}
	return wasmbuild.BuildCPath(t, []string{filepath.Join(sdk, "c", "testdata", "tally.c")})
}

// TestW7_RustAndCMultiSourceEffectsAndRemoveRow: a two-source plugin on
// the Rust and on the C SDK sees each event's source and stream id in
// evolve and effects, returns its effects in the decisions and removes its
// row (the response says so); under the host, the row holds both sources'
// context, a Close makes it a tombstone and a later Ping starts it again
// from initial, as the AssemblyScript tally does.
func TestW7_RustAndCMultiSourceEffectsAndRemoveRow(t *testing.T) {
	for _, lang := range []string{"rust", "c"} {
		t.Run(lang, func(t *testing.T) {
			path := tallyPath(t, lang)
			checkTallyEffects(t, path)
			checkTallyTombstone(t, path)
		})
	}
}
