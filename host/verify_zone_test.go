package host_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	zonereadings "github.com/dynafold/dynafold/plugins/examples/zone-readings"
)

// A stream feeding several rows (zone-readings), delivered in one batch
// or in two: the verification finds nothing, on the Wasm plugin as
// natively, although each row's checkpoint stops at its own last event
// while the stream goes on. A reading of a zone never placed is rejected
// and makes no row, so its absence is no finding; an edited row is found.
func TestV1_VerifyFindsNothingOnAStreamFeedingSeveralRows(t *testing.T) {
	for _, kind := range []string{"native", "wasm"} {
		t.Run(kind, func(t *testing.T) {
			h, env, table := zoneHost(t, kind)
			events := []host.NewEvent{placed("north"), reading("north", "20"), placed("south"), reading("south", "25"),
				reading("north", "31"), reading("east", "5")}
			one := sensorRecords(t, h, "s-1", events...)
			two := sensorRecords(t, h, "s-2", events...)
			for _, batch := range [][]host.Record{one, two[:4], two[4:]} {
				res, err := h.ProcessBatch(context.Background(), batch)
				require.NoError(t, err)
				require.Empty(t, res.Failed())
			}
			south2 := env.Get(t, table, zonereadings.RowKey("s-2", "south"))
			require.Equal(t, "4", south2["seq"].Str, "the checkpoint stops at the row's own last event")
			require.Nil(t, env.Get(t, table, zonereadings.RowKey("s-1", "east")))

			rep := verifyAll(t, h, host.VerifyOptions{})
			assert.Empty(t, rep.Findings)
			assert.Equal(t, 4, rep.Total().Rows)

			south2["maxCelsius"] = abi.N("99")
			env.Put(t, table, south2)
			rep = verifyAll(t, h, host.VerifyOptions{})
			d := only(t, rep, host.FindingDiffers)
			assert.Equal(t, zonereadings.RowKey("s-2", "south"), d.Key)
			assert.Equal(t, []host.AttrDiff{{Path: "maxCelsius", Stored: num("99"), Fold: num("25")}}, d.Diffs)
		})
	}
}
