package ddblocal

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/wire"
)

func TestY8_AnswersEncodeAsEncodingJSONEncodesThem(t *testing.T) {
	it := wire.Item{"pk": abi.S("a<b>&c\u2028"), "n": abi.N("1.50"), "b": abi.B([]byte{0, 255}), "m": abi.M(abi.Item{"é": abi.L(abi.Null(), abi.Bool(true))}),
		"ss": abi.SS("x", "\"q\""), "bs": abi.BS([]byte("z"))}
	reused := bytes.NewBufferString("what an earlier answer left")
	for _, out := range []any{
		map[string]any{},
		map[string]any{"Item": it},
		map[string]any{"Item": wire.Item(nil)},
		map[string]any{"Items": []wire.Item{it, {}}, "Count": 2, "ScannedCount": 2, "LastEvaluatedKey": wire.Item{"pk": abi.S("k")}},
		map[string]any{"Items": []wire.Item(nil), "ConsumedCapacity": map[string]any{"TableName": "t", "CapacityUnits": 0.5}},
		map[string]any{"Responses": map[string][]wire.Item{"b": {it}, "a": {it, {}}, "c": {}, "d": nil}, "UnprocessedKeys": map[string]any{}},
		map[string]any{"Responses": map[string][]wire.Item(nil), "UnprocessedKeys": map[string]any(nil)},
		map[string]any{"Responses": map[string][]wire.Item{}, "UnprocessedKeys": map[string]any{"t": map[string]any{"Keys": []wire.Item{it}}}},
		map[string]any(nil),
		[]string{"x"},
	} {
		want, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, buf := range []*bytes.Buffer{nil, reused} {
			got, err := marshalAnswer(buf, out)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("marshalAnswer:\n%s\nencoding/json:\n%s", got, want)
			}
		}
	}
	cc := map[string]any{"TableName": "t", "CapacityUnits": 0.5}
	for _, a := range []*itemAnswer{{}, {item: it, hasItem: true}, {hasCC: true, cc: cc}, {item: it, hasItem: true, cc: cc, hasCC: true},
		{item: nil, hasItem: true}, {hasCC: true}} {
		want, err := json.Marshal(a.asMap())
		if err != nil {
			t.Fatal(err)
		}
		for _, buf := range []*bytes.Buffer{nil, reused} {
			got, err := marshalAnswer(buf, a)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("GetItem's answer:\n%s\nencoding/json:\n%s", got, want)
			}
		}
	}
}
