package ddblocal

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/ddblocal/internal/wire"
)

// TestY8_GetItemKeyReadAsTheDecoderReadsIt: the envelope reader's own
// read of a GetItem's key (a reused map) gives the item and the error the
// decoder gives, and leaves the reader where it does, for plain keys and
// for every key it hands to the decoder.
func TestY8_GetItemKeyReadAsTheDecoderReadsIt(t *testing.T) {
	keys := []string{
		`{"pk":{"S":"g"},"sk":{"N":"42"}}`,
		`{ "pk" : { "S" : "g" } , "sk" : { "N" : "042" } } `,
		`{"pk":{"S":"é日本"}}`,
		`{"pk":{"S":""}}`,
		`{}`,
		`{"pk":{"S":"a"},"pk":{"S":"b"}}`,
		`{"a":{"S":"1"},"b":{"S":"2"},"c":{"S":"3"}}`,
		`{"pk":{"B":"AAEC"}}`,
		`{"pk":{"S":"a\"b"}}`,
		`{"p\u006b":{"S":"x"}}`,
		`{"pk":{"S":"x","N":"1"}}`,
		`{"pk":{"NULL":true}}`,
		`{"pk":{}}`,
		`{"pk":{"S":1}}`,
		`{"pk":{"S":"bad` + "\xff" + `utf8"}}`,
		`{"pk":{"S":"` + strings.Repeat("x", 3000) + `"},"sk":{"N":"1"}}`,
		`{"pk":{"S":"` + strings.Repeat("x", 500<<10) + `"}}`,
		`{"pk":{"s":"x"}}`,
	}
	for _, k := range keys {
		t.Run(fmt.Sprintf("%.40s", k), func(t *testing.T) {
			body := []byte(k + `,"TableName":"t"`)
			var fast, slow wire.RequestItem
			var pooled = new(getItemInput).keyMap
			ef := &envelope{b: body}
			okF, errF := ef.setKey(&fast, &pooled)
			es := &envelope{b: body}
			okS, errS := es.setItem(&slow)
			if okF != okS || fmt.Sprint(errF) != fmt.Sprint(errS) || ef.pos != es.pos {
				t.Fatalf("setKey: %v %v at %d; setItem: %v %v at %d", okF, errF, ef.pos, okS, errS, es.pos)
			}
			if fast.Set() != slow.Set() || fmt.Sprint(fast.Err) != fmt.Sprint(slow.Err) || !reflect.DeepEqual(fast.Item, slow.Item) {
				t.Fatalf("setKey read %+v, setItem %+v", fast, slow)
			}
			if plain := strings.HasPrefix(k, `{"pk":{"S":"g"}`) || strings.HasPrefix(k, `{ "pk"`); plain && pooled == nil {
				t.Errorf("a plain key was not read into a reused map")
			}
			putKey(pooled)
		})
	}
}
