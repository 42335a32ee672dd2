package deliver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// sample is an effect as the host hands one to a target.
func sample() Effect {
	return Effect{
		Projection: "shipments",
		Stream:     "Order",
		StreamID:   "o-1",
		Version:    3,
		Index:      0,
		Key:        abi.Item{"pk": abi.S("SHIP#s-1")},
		Value: abi.M(abi.Item{
			"_tag":    abi.S("ShipmentNotice"),
			"kind":    abi.S("at Hamburg"),
			"parcels": abi.N("12345678901234567890123456789012345678"),
		}),
	}
}

func TestO2_IdempotencyKeyIsDeterministicPerEffect(t *testing.T) {
	e := sample()
	k := e.IdempotencyKey()
	require.Len(t, k, 64)
	again := sample()
	again.Value = abi.M(abi.Item{"other": abi.S("value")}) // the key names the effect's place, not its value
	assert.Equal(t, k, again.IdempotencyKey(), "the same effect keeps its key across redeliveries")

	change := map[string]func(*Effect){
		"index":      func(e *Effect) { e.Index = 1 },
		"version":    func(e *Effect) { e.Version = 4 },
		"streamId":   func(e *Effect) { e.StreamID = "o-2" },
		"stream":     func(e *Effect) { e.Stream = "Scan" },
		"row":        func(e *Effect) { e.Key = abi.Item{"pk": abi.S("SHIP#s-2")} },
		"projection": func(e *Effect) { e.Projection = "audit" },
		"no row key": func(e *Effect) { e.Key = nil },
		// netstrings keep fields apart: moving text from one to the next changes the key
		"boundary": func(e *Effect) { e.Stream, e.StreamID = "Ordero", "-1" },
	}
	seen := map[string]string{k: "sample"}
	for name, f := range change {
		e := sample()
		f(&e)
		got := e.IdempotencyKey()
		prev, dup := seen[got]
		assert.False(t, dup, "%s: same key as %s", name, prev)
		seen[got] = name
	}
}

func TestO2_EffectJSONPlain(t *testing.T) {
	e := sample()
	b, err := json.Marshal(e)
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"idempotencyKey": "`+e.IdempotencyKey()+`",
		"projection": "shipments",
		"stream": "Order", "streamId": "o-1", "version": 3, "index": 0,
		"key": {"pk": "SHIP#s-1"},
		"effect": {"_tag": "ShipmentNotice", "kind": "at Hamburg", "parcels": 12345678901234567890123456789012345678}
	}`, string(b))
	assert.Contains(t, string(b), `"parcels":12345678901234567890123456789012345678`, "38 digits, as stored")

	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var back map[string]any
	require.NoError(t, d.Decode(&back))
	assert.Equal(t, json.Number("12345678901234567890123456789012345678"), back["effect"].(map[string]any)["parcels"])
}

func TestO2_EffectJSONEveryType(t *testing.T) {
	e := Effect{Stream: "S", StreamID: "i", Version: 1, Key: abi.Item{"pk": abi.S("p"), "sk": abi.N("7")}}
	e.Value = abi.M(abi.Item{
		"s": abi.S("x"), "n": abi.N("-1.50e+3"), "b": abi.B([]byte("hi")), "t": abi.Bool(true),
		"z": abi.Null(), "l": abi.L(abi.N("1"), abi.S("a")), "ss": abi.SS("a", "b"),
		"ns": abi.NS("1", "2.5"), "bs": abi.BS([]byte("a")), "m": abi.M(abi.Item{"x": abi.Bool(false)}),
	})
	plain, err := e.JSON(Plain)
	require.NoError(t, err)
	assert.Contains(t, string(plain), `"key":{"pk":"p","sk":7}`)
	assert.Contains(t, string(plain), `"effect":{"b":"aGk=","bs":["YQ=="],"l":[1,"a"],"m":{"x":false},"n":-1.50e+3,"ns":[1,2.5],"s":"x","ss":["a","b"],"t":true,"z":null}`)
	assert.NotContains(t, string(plain), "projection", "an empty projection is left out")

	typed, err := e.JSON(DynamoDBJSON)
	require.NoError(t, err)
	assert.Contains(t, string(typed), `"key":{"pk":{"S":"p"},"sk":{"N":"7"}}`)
	assert.Contains(t, string(typed), `"n":{"N":"-1.50e+3"}`)
	assert.Contains(t, string(typed), `"bs":{"BS":["YQ=="]}`)
}

func TestO2_EffectJSONNumbers(t *testing.T) {
	tests := []struct{ n, want string }{
		{"0", "0"}, {"-7", "-7"}, {"+5", "5"}, {".5", "0.5"}, {"-.5", "-0.5"}, {"5.", "5"},
		{"007", "7"}, {"1E+10", "1e+10"}, {"1e-130", "1e-130"},
		{"99999999999999999999999999999999999999", "99999999999999999999999999999999999999"},
	}
	for _, tt := range tests {
		b, err := Effect{Value: abi.N(tt.n)}.JSON(Plain)
		require.NoError(t, err, tt.n)
		assert.Contains(t, string(b), `"effect":`+tt.want+`}`, tt.n)
		assert.True(t, json.Valid(b), tt.n)
	}
	for _, bad := range []string{"", "-", ".", "1e", "1e+", "abc", "NaN", "1.2.3", "0x10", "1 2"} {
		_, err := Effect{Value: abi.N(bad)}.JSON(Plain)
		assert.ErrorIs(t, err, errNotNumber, "%q", bad)
	}
	_, err := Effect{Value: abi.Value{}}.JSON(Plain)
	assert.Error(t, err, "the zero Value has no JSON form")
	_, err = Effect{}.JSON(Encoding(9))
	assert.Error(t, err)
}

func TestO2_FuncAndPermanent(t *testing.T) {
	var got []Effect
	var target Target = Func(func(_ context.Context, e Effect) error {
		got = append(got, e)
		return nil
	})
	require.NoError(t, target.Deliver(context.Background(), sample()))
	require.Len(t, got, 1)

	cause := errors.New("no such customer")
	err := Func(func(context.Context, Effect) error { return Permanent(cause) }).Deliver(context.Background(), sample())
	assert.ErrorIs(t, err, ErrPermanent)
	assert.ErrorIs(t, err, cause)
	assert.NotErrorIs(t, cause, ErrPermanent)
	assert.NoError(t, Permanent(nil))
}

// TestO2_IdempotencyKeyRecipe recomputes a key from the recipe the
// documentation gives, so consumers in any language can, and pins it: a
// change to the key would make redelivered effects look new.
func TestO2_IdempotencyKeyRecipe(t *testing.T) {
	e := Effect{Stream: "Order", StreamID: "o-1", Version: 3, Index: 0, Key: abi.Item{"pk": abi.S("SHIP#s-1")}}
	text := "17:dynafold-effect-1,0:,5:Order,3:o-1," + `23:{"pk":{"S":"SHIP#s-1"}},` + "1:3,1:0,"
	sum := sha256.Sum256([]byte(text))
	assert.Equal(t, hex.EncodeToString(sum[:]), e.IdempotencyKey())
	assert.Equal(t, "92fafc69dc016bffbbca32577e2b03c977241f21a3443265d760de40af104068", e.IdempotencyKey())
}

// TestO2_IdempotencyKeyIsTheRecipesForAnyEffect computes keys of varied
// effects (multi-byte texts, no projection, binary and number keys, a
// nested key, long ids, large and negative indexes) as the recipe says,
// with fmt's netstrings, and compares: the key written into one buffer is
// the same, and so is the one JSON writes.
func TestO2_IdempotencyKeyIsTheRecipesForAnyEffect(t *testing.T) {
	recipe := func(e Effect) string {
		var key bytes.Buffer
		_ = ddbjson.AppendItem(&key, e.Key)
		h := sha256.New()
		for _, f := range []string{"dynafold-effect-1", e.Projection, e.Stream, e.StreamID, key.String(),
			strconv.FormatUint(e.Version, 10), strconv.Itoa(e.Index)} {
			fmt.Fprintf(h, "%d:%s,", len(f), f)
		}
		return hex.EncodeToString(h.Sum(nil))
	}
	long := strings.Repeat("ø", 3000)
	effects := []Effect{
		{},
		{Projection: "ledger", Stream: "Acct", StreamID: "a#1", Version: 1, Index: 0, Key: abi.Item{"pk": abi.S("A#1"), "sk": abi.N("10")}},
		{Projection: "π", Stream: "Ordre", StreamID: "ø-1", Version: 1<<64 - 1, Index: 1 << 40, Key: abi.Item{"pk": abi.B([]byte{0, 1, 2})}},
		{Stream: "S", StreamID: long, Version: 7, Index: -3, Key: abi.Item{"pk": abi.S(long)}},
		{Stream: "S", StreamID: "x", Version: 2, Key: abi.Item{"pk": abi.M(abi.Item{"a": abi.L(abi.N("1"), abi.Bool(true))})}},
	}
	for i, e := range effects {
		e.Value = abi.M(abi.Item{"n": abi.N("1")})
		want := recipe(e)
		assert.Equal(t, want, e.IdempotencyKey(), "effect %d", i)
		b, err := e.JSON(DynamoDBJSON)
		require.NoError(t, err)
		var got struct{ IdempotencyKey string }
		require.NoError(t, json.Unmarshal(b, &got))
		assert.Equal(t, want, got.IdempotencyKey, "effect %d's JSON", i)
	}
}
