package dynamo_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/ddbjson"
	"github.com/dynafold/dynafold/internal/dynamotest"
)

// randItems makes random items: every type, numbers in every written
// form, strings with escapes and non-ASCII, binary of every byte, sets,
// and one attribute nested to DynamoDB's 32 levels.
type randItems struct{ r *rand.Rand }

func (g randItems) str() string {
	alphabet := []string{"a", "Z", "0", " ", "\"", "\\", "/", "<", ">", "&", "\n", "\t", "\x01", "é", "日本", "😀", "\u2028"}
	var b strings.Builder
	for range g.r.IntN(12) {
		b.WriteString(alphabet[g.r.IntN(len(alphabet))])
	}
	return b.String()
}

func (g randItems) num() string {
	forms := []string{"0", "-0", "1", "-17", "1.50", "0.000100", "12345678901234567890123456789012345678", "1E+5", "-2.5e-3", "9.9999999999999999999999999999999999999E+125", "1e-130"}
	if g.r.IntN(2) == 0 {
		return forms[g.r.IntN(len(forms))]
	}
	return fmt.Sprintf("%d.%03d", g.r.IntN(1e6)-5e5, g.r.IntN(1000))
}

func (g randItems) blob() []byte {
	b := make([]byte, g.r.IntN(20))
	for i := range b {
		b[i] = byte(g.r.IntN(256))
	}
	return b
}

func (g randItems) value(depth int) abi.Value {
	k := g.r.IntN(11)
	if depth >= 31 && k >= 5 && k <= 6 {
		k = 0 // no deeper than DynamoDB's 32 levels
	}
	switch k {
	case 0:
		return abi.S(g.str())
	case 1:
		return abi.N(g.num())
	case 2:
		return abi.B(g.blob())
	case 3:
		return abi.Bool(g.r.IntN(2) == 0)
	case 4:
		return abi.Null()
	case 5:
		m := abi.Item{}
		for range g.r.IntN(4) {
			m[g.str()] = g.value(depth + 1)
		}
		return abi.M(m)
	case 6:
		var l []abi.Value
		for range g.r.IntN(4) {
			l = append(l, g.value(depth+1))
		}
		return abi.L(l...)
	case 7:
		return abi.SS(g.uniq(g.str)...)
	case 8:
		return abi.NS(g.uniq(g.num)...)
	default:
		var bs [][]byte
		for _, s := range g.uniq(func() string { return string(g.blob()) }) {
			bs = append(bs, []byte(s))
		}
		return abi.BS(bs...)
	}
}

// uniq is 1 to 4 distinct values of gen (a set).
func (g randItems) uniq(gen func() string) []string {
	seen := map[string]bool{}
	var out []string
	for range 1 + g.r.IntN(4) {
		if s := gen(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// deep is a value nested n levels, maps and lists in turn.
func (g randItems) deep(n int) abi.Value {
	v := g.value(31)
	for i := 1; i < n; i++ {
		if i%2 == 0 {
			v = abi.L(v, abi.N(g.num()))
		} else {
			v = abi.M(abi.Item{g.str(): v})
		}
	}
	return v
}

func (g randItems) item() abi.Item {
	it := abi.Item{"pk": abi.S(g.str()), "sk": abi.S(g.str())}
	for range g.r.IntN(8) {
		it[g.str()+"_"] = g.value(1)
	}
	it["deep"] = g.deep(1 + g.r.IntN(32))
	return it
}

// echoServer keeps the Item of the last PutItem it was sent and answers
// every GetItem with the item it is told to.
type echoServer struct {
	mu     sync.Mutex
	sent   []byte // the last PutItem's Item, as sent
	answer []byte // GetItem's Item
}

func (e *echoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	e.mu.Lock()
	defer e.mu.Unlock()
	switch r.Header.Get("X-Amz-Target") {
	case "DynamoDB_20120810.PutItem":
		_ = ddbjson.Object(body, func(k, v []byte) error {
			if string(k) == "Item" {
				e.sent = append([]byte(nil), v...)
			}
			return nil
		})
		_, _ = w.Write([]byte(`{}`))
	case "DynamoDB_20120810.GetItem":
		_, _ = w.Write([]byte(`{"Item":` + string(e.answer) + `}`))
	}
}

// TestY8_ItemsSurviveEncodeDecodeByteExact sends random items through the
// wire path and through the SDK's client, both ways: what each sends in a
// PutItem decodes to the item, byte for byte once canonically encoded
// (numbers keep their text, binary its bytes, sets their members, nesting
// its 32 levels), and an answer's item decodes to the same item in both.
func TestY8_ItemsSurviveEncodeDecodeByteExact(t *testing.T) {
	echo := &echoServer{}
	ts := httptest.NewServer(echo)
	t.Cleanup(ts.Close)
	client := dynamotest.ClientAt(t, ts.URL)
	wire, sdk := dynamo.New(client), dynamo.NewSDK(client)
	require.True(t, wire.Wire())
	g := randItems{rand.New(rand.NewPCG(28, 8))}
	ctx := context.Background()
	for i := range 300 {
		it := g.item()
		want, err := ddbjson.ItemToJSON(it)
		require.NoError(t, err)
		for name, db := range map[string]*dynamo.DB{"wire": wire, "sdk": sdk} {
			require.NoError(t, db.PutItem(ctx, store.Put{Table: "t", Item: it}), "item %d via %s", i, name)
			echo.mu.Lock()
			sent := echo.sent
			echo.answer = want
			echo.mu.Unlock()
			back, err := ddbjson.DecodeItem(sent)
			require.NoError(t, err, "item %d via %s: %s", i, name, sent)
			again, err := ddbjson.ItemToJSON(back)
			require.NoError(t, err)
			require.Equal(t, string(want), string(again), "item %d as %s sent it", i, name)

			got, err := db.GetItem(ctx, "t", abi.Item{"pk": it["pk"], "sk": it["sk"]})
			require.NoError(t, err, "item %d via %s", i, name)
			gotJSON, err := ddbjson.ItemToJSON(got)
			require.NoError(t, err)
			require.Equal(t, string(want), string(gotJSON), "item %d as %s decoded the answer", i, name)
		}
	}
}
