package ddblocal

import (
	"context"
	"testing"

	"github.com/dynafold/dynafold/ddblocal/internal/reqshape"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// BenchmarkCheckedRead: what GetItem's and PutItem's bodies (those of
// BenchmarkServerCPU) cost before the operation runs, side by side: the
// checking path (ddbjson.Valid, checkUTF8, reqshape.Walk, the envelope
// reader) and the checked read (ddbjson.ValidText, the envelope reader).
//
//	go test ./ddblocal -run '^$' -bench CheckedRead -benchmem
func BenchmarkCheckedRead(b *testing.B) {
	bodies := map[string]string{
		"GetItem": `{"ConsistentRead":true,"Key":{"pk":{"S":"g"},"sk":{"N":"42"}},"TableName":"cpu"}`,
		"PutItem": `{"Item":{"count":{"N":"49"},"doc":{"M":{"x":{"N":"1"},"y":{"S":"why"},"z":{"L":[{"S":"p"},{"S":"q"}]}}},"name":{"S":"item-name-with-some-length"},"pk":{"S":"w3"},"sk":{"N":"7"},"tags":{"SS":["a","b","c"]}},"TableName":"cpu"}`,
	}
	ctx := context.Background()
	for _, op := range []string{"GetItem", "PutItem"} {
		body := []byte(bodies[op])
		input := func() walkedInput {
			if op == "GetItem" {
				return new(getItemInput)
			}
			return new(putItemInput)
		}
		done := func(in walkedInput) {
			if g, ok := in.(*getItemInput); ok {
				putKey(g.keyMap)
			}
		}
		b.Run(op+"/checking", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !ddbjson.Valid(body) {
					b.Fatal("not JSON")
				}
				if _, err := checkRequest(ctx, reqshape.Ops[op], body, false); err != nil {
					b.Fatal(err)
				}
				in := input()
				if err := decode(ctx, body, in); err != nil {
					b.Fatal(err)
				}
				done(in)
			}
		})
		b.Run(op+"/checked", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if valid, text := ddbjson.ValidText(body); !valid || !text {
					b.Fatal("not JSON text")
				}
				in := input()
				if !readChecked(body, in) {
					b.Fatal("the checked read left it")
				}
				done(in)
			}
		})
	}
}
