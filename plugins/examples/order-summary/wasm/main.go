//go:build wasip1

// Command wasm is the order-summary plugin as a Wasm reactor module:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o build/plugins/order-summary.wasm ./plugins/examples/order-summary/wasm
package main

import (
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

func init() { guest.Register(ordersummary.Projection) }

func main() {}
