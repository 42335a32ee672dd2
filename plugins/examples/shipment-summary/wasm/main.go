//go:build wasip1

// Command wasm is the shipment-summary plugin as a Wasm reactor module:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o build/plugins/shipment-summary.wasm ./plugins/examples/shipment-summary/wasm
package main

import (
	shipmentsummary "github.com/dynafold/dynafold/plugins/examples/shipment-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

func init() { guest.Register(shipmentsummary.Projection) }

func main() {}
