//go:build wasip1

// Command wasm is the zone-readings plugin as a Wasm reactor module:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o build/plugins/zone-readings.wasm ./plugins/examples/zone-readings/wasm
package main

import (
	zonereadings "github.com/dynafold/dynafold/plugins/examples/zone-readings"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

func init() { guest.Register(zonereadings.Projection) }

func main() {}
