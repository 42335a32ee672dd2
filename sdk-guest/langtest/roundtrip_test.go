// Package langtest tests the Rust and C guest SDKs (sdk-guest/rust,
// sdk-guest/c) against the ABI's reference codec (package abi), through
// test guests built from testdata/ of each SDK and loaded by the host.
package langtest_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/internal/ordercases"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

func sdkDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..")
}

// echo loads the echo test guest of lang ("rust" or "c"): evolve makes an
// event's data the state, decoded into the SDK's own value types, and
// to_item writes it back.
func echo(t *testing.T, lang string) *plugin.Plugin {
	t.Helper()
	var wasm []byte
	if lang == "rust" {
		wasm = wasmbuild.BuildRust(t, filepath.Join(sdkDir(), "rust", "testdata", "echo"))
	} else {
		wasm = wasmbuild.BuildC(t, []string{filepath.Join(sdkDir(), "c", "testdata", "echo.c")})
	}
	ctx := context.Background()
	p, err := plugin.Load(ctx, wasm, plugin.Config{})
	if err != nil {
		t.Fatalf("load the %s echo guest: %v", lang, err)
	}
	t.Cleanup(func() { _ = p.Close(ctx) })
	return p
}

// gen makes random values of every kind.
type gen struct{ r *rand.Rand }

func (g gen) str() string {
	const alphabet = "abcXYZ09_-#.:é☃\u00ad𝄞 \t\"\\"
	runes := []rune(alphabet)
	n := g.r.IntN(12)
	if g.r.IntN(20) == 0 {
		n = 130 + g.r.IntN(200) // a length that takes a two-byte varint
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteRune(runes[g.r.IntN(len(runes))])
	}
	return b.String()
}

func (g gen) name() string {
	for {
		if s := g.str(); s != "" {
			return s
		}
	}
}

func (g gen) bytes() []byte {
	b := make([]byte, g.r.IntN(20))
	for i := range b {
		b[i] = byte(g.r.IntN(256))
	}
	return b
}

func (g gen) value(depth int) abi.Value {
	k := abi.Kind(1 + g.r.IntN(10))
	if depth >= 4 && (k == abi.KindM || k == abi.KindL) {
		k = abi.KindS
	}
	switch k {
	case abi.KindS:
		return abi.S(g.str())
	case abi.KindN:
		return abi.N(ordercases.RandomNumber(g.r))
	case abi.KindB:
		return abi.B(g.bytes())
	case abi.KindBOOL:
		return abi.Bool(g.r.IntN(2) == 1)
	case abi.KindNULL:
		return abi.Null()
	case abi.KindM:
		return abi.M(g.item(depth + 1))
	case abi.KindL:
		l := make([]abi.Value, g.r.IntN(5))
		for i := range l {
			l[i] = g.value(depth + 1)
		}
		return abi.L(l...)
	case abi.KindSS, abi.KindNS:
		ss := make([]string, 1+g.r.IntN(4))
		for i := range ss {
			if k == abi.KindSS {
				ss[i] = g.str()
			} else {
				ss[i] = ordercases.RandomNumber(g.r)
			}
		}
		if k == abi.KindSS {
			return abi.SS(ss...)
		}
		return abi.NS(ss...)
	default:
		bs := make([][]byte, 1+g.r.IntN(4))
		for i := range bs {
			bs[i] = g.bytes()
		}
		return abi.BS(bs...)
	}
}

func (g gen) item(depth int) abi.Item {
	it := abi.Item{}
	for n := g.r.IntN(7); len(it) < n; {
		it[g.name()] = g.value(depth)
	}
	return it
}

// shuffled encodes an optional item as abi.AppendOptItem does, but with
// the attributes of every map in random order (decoders accept any order;
// encoders write ascending names).
func shuffled(r *rand.Rand, it abi.Item) []byte {
	out := abi.AppendUvarint(nil, uint64(len(it))+1)
	return shuffledEntries(r, out, it)
}

func shuffledEntries(r *rand.Rand, out []byte, it abi.Item) []byte {
	names := make([]string, 0, len(it))
	for k := range it {
		names = append(names, k)
	}
	sort.Strings(names)
	r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	for _, k := range names {
		out = abi.AppendString(out, k)
		out = shuffledValue(r, out, it[k])
	}
	return out
}

func shuffledValue(r *rand.Rand, out []byte, v abi.Value) []byte {
	switch v.Kind {
	case abi.KindM:
		out = append(out, byte(abi.KindM))
		out = abi.AppendUvarint(out, uint64(len(v.Map)))
		return shuffledEntries(r, out, v.Map)
	case abi.KindL:
		out = append(out, byte(abi.KindL))
		out = abi.AppendUvarint(out, uint64(len(v.List)))
		for _, x := range v.List {
			out = shuffledValue(r, out, x)
		}
		return out
	}
	return abi.AppendValue(out, v)
}

// evolveWithData is an evolve request of one Echo event whose data is the
// encoded optional item data, as given.
func evolveWithData(data []byte) []byte {
	key := abi.AppendOptItem(nil, abi.Item{"pk": abi.S("e-1")})
	q := binary.LittleEndian.AppendUint32(nil, uint32(len(key)))
	q = append(q, key...)
	q = abi.AppendString(q, "e-1")
	q = append(q, 1, 0, 0, 0, 0) // no state
	q = abi.AppendUvarint(q, 1)
	q = abi.AppendString(q, "Echo")
	q = abi.AppendString(q, "Echo")
	q = abi.AppendString(q, "e-1")
	q = abi.AppendUvarint(q, 1)
	q = abi.AppendString(q, "Echo")
	q = binary.LittleEndian.AppendUint32(q, uint32(len(data)))
	q = append(q, data...)
	q = append(q, 1, 0, 0, 0, 0) // no metadata
	q = abi.AppendString(q, "2026-01-01T00:00:00Z")
	return q
}

// TestW7_EveryValueTypeRoundTripsThroughEachSDK sends random items (every
// kind: S with any UTF-8, N texts in every form, B, BOOL, NULL, M and L
// nested four deep, SS, NS, BS; names and strings longer than 127 bytes;
// attributes of every map in random order) as event data to the Rust and C
// echo guests, which decode them into their SDK's value types and write
// them back: the item out is, byte for byte, the reference encoding
// (abi.AppendOptItem: names ascending, numbers as their exact text, sets in
// order).
func TestW7_EveryValueTypeRoundTripsThroughEachSDK(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 60
	}
	if v, err := strconv.Atoi(os.Getenv("DYNAFOLD_ROUNDTRIP_N")); err == nil {
		n = v
	}
	ctx := context.Background()
	for _, lang := range []string{"rust", "c"} {
		t.Run(lang, func(t *testing.T) {
			p := echo(t, lang)
			r := rand.New(rand.NewPCG(3, uint64(len(lang))))
			g := gen{r}
			kinds := map[abi.Kind]int{}
			for i := 0; i < n; i++ {
				it := g.item(0)
				it["_tag"] = abi.S("Echo")
				countKinds(kinds, it)
				out, err := p.Call(ctx, abi.CapEvolve, evolveWithData(shuffled(r, it)))
				if err != nil {
					t.Fatalf("item %d: %v\n%v", i, err, it)
				}
				resp, err := abi.DecodeEvolveResponse(out)
				if err != nil || len(resp.Decisions) != 1 || resp.Decisions[0].Outcome != abi.Applied {
					t.Fatalf("item %d: %v %+v", i, err, resp)
				}
				got := rawItem(t, out)
				if want := abi.AppendOptItem(nil, it); !bytes.Equal(want, got) {
					t.Fatalf("item %d: the %s SDK wrote\n%q\nwant\n%q\nfor %v", i, lang, got, want, it)
				}
			}
			for k := abi.KindS; k <= abi.KindBS; k++ {
				if kinds[k] == 0 {
					t.Errorf("no value of kind %s was sent", k)
				}
			}
			t.Logf("%d items, values by kind: %v", n, kinds)
		})
	}
}

func countKinds(kinds map[abi.Kind]int, it abi.Item) {
	for _, v := range it {
		countValue(kinds, v)
	}
}

func countValue(kinds map[abi.Kind]int, v abi.Value) {
	kinds[v.Kind]++
	switch v.Kind {
	case abi.KindM:
		countKinds(kinds, v.Map)
	case abi.KindL:
		for _, x := range v.List {
			countValue(kinds, x)
		}
	}
}

// rawItem returns the encoding of the item of an evolve response, as the
// guest wrote it.
func rawItem(t *testing.T, out []byte) []byte {
	r := abi.NewReader(string(out))
	for {
		var d abi.Decision
		if b, ok := r.NextByte(); !ok || b == 0 {
			break
		}
		r.Unread()
		r.ReadDecision(&d)
	}
	r.RawOptItem() // the state
	r.Bool()       // removed
	raw, _ := r.RawOptItem()
	if err := r.Err(); err != nil {
		t.Fatalf("response: %v", err)
	}
	return []byte(raw)
}

// TestW7_EachSDKRejectsWhatTheABIRejects sends event data that ABI.md §3
// says decoders must reject: each SDK's decoder refuses it, failing the
// event with a message that says what is wrong, never reading past the
// input or allocating what a hostile length asks for.
func TestW7_EachSDKRejectsWhatTheABIRejects(t *testing.T) {
	deep := []byte{2, 1, 'a'}
	for i := 0; i < 70; i++ {
		deep = append(deep, byte(abi.KindL), 1)
	}
	deep = append(deep, byte(abi.KindNULL))
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"duplicate names", []byte{3, 1, 'a', 5, 1, 'a', 5}, `duplicate attribute "a"`},
		{"a bool that is not 0 or 1", []byte{2, 1, 'a', 4, 2}, "bad bool"},
		{"an unknown kind", []byte{2, 1, 'a', 11}, "unknown kind 11"},
		{"a truncated string", []byte{2, 1, 'a', 1, 5, 'x'}, "exceeds the input"},
		{"a count larger than the input", []byte{2, 1, 'a', byte(abi.KindL), 0xff, 0xff, 0xff, 0x7f}, "exceeds the input"},
		{"a varint of 11 bytes", append([]byte{2, 1, 'a', byte(abi.KindS)}, bytes.Repeat([]byte{0xff}, 11)...), "varint overflows 64 bits"},
		{"nesting deeper than 64", deep, "nesting deeper than 64"},
		{"trailing bytes", []byte{1, 9}, "trailing bytes"},
	}
	ctx := context.Background()
	for _, lang := range []string{"rust", "c"} {
		t.Run(lang, func(t *testing.T) {
			p := echo(t, lang)
			for _, c := range cases {
				out, err := p.Call(ctx, abi.CapEvolve, evolveWithData(c.data))
				if err != nil {
					t.Errorf("%s: the call failed: %v", c.name, err)
					continue
				}
				resp, err := abi.DecodeEvolveResponse(out)
				if err != nil || len(resp.Decisions) != 1 {
					t.Errorf("%s: %v %+v", c.name, err, resp)
					continue
				}
				d := resp.Decisions[0]
				if d.Outcome != abi.Failed || d.Error == nil || !strings.Contains(d.Error.Message, c.want) || !utf8.ValidString(d.Error.Message) {
					t.Errorf("%s: decision %v %v, want failed with %q", c.name, d.Outcome, d.Error, c.want)
				}
				if resp.State != nil {
					t.Errorf("%s: the rejected data became a state: %v", c.name, resp.State)
				}
			}
		})
	}
}
