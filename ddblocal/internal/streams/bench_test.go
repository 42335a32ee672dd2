package streams

import (
	"path/filepath"
	"testing"

	"github.com/dynafold/dynafold/abi"
)

func benchChange() Change {
	old := abi.Item{"pk": abi.S("order#123"), "sk": abi.S("v#1"), "total": abi.N("129.95"), "status": abi.S("OPEN"),
		"lines": abi.L(abi.M(map[string]abi.Value{"sku": abi.S("A-1"), "qty": abi.N("2")}))}
	nw := abi.CloneItem(old)
	nw["status"] = abi.S("PAID")
	return Change{EventName: EventModify, Keys: abi.Item{"pk": old["pk"], "sk": old["sk"]}, OldImage: old, NewImage: nw}
}

func BenchmarkRecord(b *testing.B) {
	for _, persist := range []bool{false, true} {
		name := "memory"
		if persist {
			name = "bbolt"
		}
		b.Run(name, func(b *testing.B) {
			opts := Options{}
			if persist {
				db := openDB(b, filepath.Join(b.TempDir(), "ddb.bolt"))
				opts.DB = db
			}
			r := newRegistry(b, opts)
			arn, _ := r.Enable("T", ViewNewAndOldImages, []string{"pk", "sk"})
			c := benchChange()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.Record(arn, c)
			}
			b.StopTimer()
			if err := r.Flush(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

func BenchmarkRecordNoCopy(b *testing.B) {
	r := newRegistry(b, Options{NoCopy: true})
	arn, _ := r.Enable("T", ViewNewAndOldImages, []string{"pk", "sk"})
	c := benchChange()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.Record(arn, c)
	}
}
