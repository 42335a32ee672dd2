package ddblocal

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestY8_RequestDigestIgnoresMemberOrderAndTheToken: a TransactWriteItems
// request written with its objects' members in another order, or another
// ClientRequestToken, has the same digest (the SDKs write a map's members
// in any order); a change of any value, name or array order does not.
func TestY8_RequestDigestIgnoresMemberOrderAndTheToken(t *testing.T) {
	base := `{"ClientRequestToken":"t1","TransactItems":[{"Put":{"TableName":"x","Item":{"pk":{"S":"a"},"n":{"N":"1"},"m":{"M":{"p":{"S":"q"},"r":{"L":[{"N":"1"},{"N":"2"}]}}}},"ExpressionAttributeValues":{":a":{"N":"5"},":b":{"S":"z"}}}}]}`
	same := []string{
		`{"TransactItems":[{"Put":{"ExpressionAttributeValues":{":b":{"S":"z"},":a":{"N":"5"}},"TableName":"x","Item":{"m":{"M":{"r":{"L":[{"N":"1"},{"N":"2"}]},"p":{"S":"q"}}},"n":{"N":"1"},"pk":{"S":"a"}}}}],"ClientRequestToken":"t1"}`,
		` { "ClientRequestToken" : "t2" , "TransactItems" : [ {"Put":{"TableName":"x","Item":{"pk":{"S":"a"},"n":{"N":"1"},"m":{"M":{"p":{"S":"q"},"r":{"L":[{"N":"1"},{"N":"2"}]}}}},"ExpressionAttributeValues":{":a":{"N":"5"},":b":{"S":"z"}}}} ] } `,
	}
	differ := []string{
		strings.Replace(base, `"N":"5"`, `"N":"6"`, 1),
		strings.Replace(base, `[{"N":"1"},{"N":"2"}]`, `[{"N":"2"},{"N":"1"}]`, 1),
		strings.Replace(base, `"pk":{"S":"a"}`, `"pk":{"S":"b"}`, 1),
		strings.Replace(base, `"p":{"S":"q"}`, `"P":{"S":"q"}`, 1),
		strings.Replace(base, `"TableName":"x"`, `"TableName":"x","ClientRequestToken":"t1"`, 1), // a nested member of that name counts
	}
	want := requestDigest([]byte(base))
	for _, s := range same {
		if requestDigest([]byte(s)) != want {
			t.Errorf("differs from the base, want the same: %s", s)
		}
	}
	for _, s := range differ {
		if requestDigest([]byte(s)) == want {
			t.Errorf("the same as the base, want another: %s", s)
		}
	}
}

// BenchmarkRequestDigest: the digest of a four-put TransactWriteItems with
// a ClientRequestToken, as the host sends one for each transaction.
//
//	go test ./ddblocal -run '^$' -bench RequestDigest -benchmem
func BenchmarkRequestDigest(b *testing.B) {
	put := `{"Put":{"TableName":"bench","Item":{"pk":{"S":"p"},"sk":{"N":"1"},"name":{"S":"item-name-with-some-length"},"count":{"N":"7"},"tags":{"SS":["a","b","c"]},"doc":{"M":{"x":{"N":"1"},"y":{"S":"why"},"z":{"L":[{"S":"p"},{"S":"q"}]}}}},"ConditionExpression":"attribute_not_exists(#k) OR #v < :v","ExpressionAttributeNames":{"#k":"pk","#v":"count"},"ExpressionAttributeValues":{":v":{"N":"5"}}}}`
	body := []byte(`{"ClientRequestToken":"0b9a0d5e-6c1e-4a57-9d3e-2f1d2b6c9e11","TransactItems":[` + strings.Repeat(put+",", 3) + put + `]}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		requestDigest(body)
	}
}

// TestY8_IdempotencyForgetsTokensAsTheirWindowEnds: a token is answered as
// done for 10 minutes after it was stored (a different request with it is a
// mismatch), then forgotten, and the tokens past their window are dropped
// from memory as later ones are stored; a token stored again keeps its new
// window.
func TestY8_IdempotencyForgetsTokensAsTheirWindowEnds(t *testing.T) {
	m := newIdempotency()
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	for i := range 1000 {
		m.store(fmt.Sprintf("tok-%d", i), uint64(i), t0.Add(time.Duration(i)*time.Millisecond))
	}
	if done, err := m.check("tok-5", 5, t0.Add(9*time.Minute)); !done || err != nil {
		t.Fatalf("within the window: done %v, %v; want done", done, err)
	}
	if _, err := m.check("tok-5", 6, t0.Add(9*time.Minute)); err == nil || !strings.Contains(err.Error(), "IdempotentParameterMismatch") {
		t.Fatalf("another request with the token: %v; want a mismatch", err)
	}
	m.store("tok-7", 77, t0.Add(5*time.Minute)) // stored again: a new window
	m.store("late", 1, t0.Add(10*time.Minute+500*time.Millisecond))
	if done, _ := m.check("tok-5", 5, t0.Add(10*time.Minute+500*time.Millisecond)); done {
		t.Fatal("past the window: still done")
	}
	// tok-0 … tok-500 are past their window, tok-7 (stored again) aside:
	// 500 dropped, 500 held and "late".
	if n := len(m.tokens); n != 501 {
		t.Fatalf("%d tokens held; want 501", n)
	}
	if _, held := m.tokens["tok-7"]; !held {
		t.Fatal("tok-7, stored again, was dropped at the end of its first window")
	}
	if len(m.order)-m.head != len(m.tokens) { // tok-7's first entry went with its window
		t.Fatalf("%d queued, %d held; want as many", len(m.order)-m.head, len(m.tokens))
	}
}
