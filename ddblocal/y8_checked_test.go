package ddblocal

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/ddblocal/internal/reqshape"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// checkedMembers are values of the members of GetItem and PutItem bodies,
// valid and not: each near a check of the API model, of the decoder or of
// the operation, so that bodies drawn from them fail in several ways at
// once (which error wins is what the checked read must not change).
var checkedMembers = map[string][]string{
	"TableName": {`"cpu"`, `"cpu"`, `"cpu"`, `"ab"`, `""`, `"a b"`, `"arn:aws:dynamodb:us-east-1:000000000000:table/cpu"`, `null`, `5`,
		`"c\u0070u"`, `"cpü"`, `"` + strings.Repeat("x", 256) + `"`, `"nope"`, `true`},
	"Key": {`{"pk":{"S":"g"},"sk":{"N":"7"}}`, `{"pk":{"S":"g"},"sk":{"N":"7"}}`, `{ "sk" : { "N" : "07" } , "pk" : { "S" : "g" } }`,
		`{"pk":{"S":"g"}}`, `{}`, `null`, `"x"`, `[]`, `{"pk":{"S":"g"},"sk":{"S":"7"}}`, `{"pk":{"S":"g"},"sk":{"N":"x"}}`,
		`{"pk":{"B":"AAE="},"sk":{"N":"1"}}`, `{"pk":{"S":"g","N":"1"},"sk":{"N":"1"}}`, `{"pk":{"S":5},"sk":{"N":"1"}}`,
		`{"pk":{"S":"\ud800"},"sk":{"N":"1"}}`, `{"pk":{"S":"é"},"sk":{"N":"1"}}`, `{"pk":{"S":"g"},"sk":{"N":"1"},"x":{"S":"y"}}`},
	"Item": {`{"pk":{"S":"w"},"sk":{"N":"1"},"name":{"S":"n"},"tags":{"SS":["a","b"]},"doc":{"M":{"x":{"L":[{"S":"p"},{"N":"2"}]}}}}`,
		`{"pk":{"S":"w"},"sk":{"N":"2"}}`, `{"pk":{"S":"w"}}`, `{}`, `null`, `"x"`, `{"pk":{"S":"w"},"sk":{"N":"3"},"b":{"BOOL":"yes"}}`,
		`{"pk":{"S":"w"},"sk":{"N":"4"},"n":{"NULL":false}}`, `{"pk":{"S":"w"},"sk":{"N":"5"},"s":{"SS":["a","a"]}}`,
		`{"pk":{"S":"w"},"sk":{"N":"6"},"e":{}}`, `{"pk":{"S":"w"},"sk":{"N":"7"},"v":{"S":"` + strings.Repeat("v", 500<<10) + `"}}`,
		`{"pk":{"S":"w"},"sk":{"N":"8"},"d":` + strings.Repeat(`{"L":[`, 33) + `{"S":"x"}` + strings.Repeat(`]}`, 33) + `}`,
		`{"pk":{"N":"1"},"sk":{"N":"9"}}`, `{"pk":{"S":"w"},"sk":{"N":"1e3"}}`},
	"ConsistentRead":       {`true`, `false`, `"yes"`, `"true"`, `null`, `1`},
	"ProjectionExpression": {`"#n, pk"`, `"pk"`, `""`, `5`, `null`, `"#zz"`, `"pk,"`},
	"ConditionExpression":  {`"attribute_not_exists(pk)"`, `"#n = :v"`, `""`, `5`, `null`, `"pk = :nope"`, `"size(pk) >"`},
	"ExpressionAttributeNames": {`{"#n":"name"}`, `{}`, `{"#n":5}`, `{"#n":null}`, `null`, `[]`, `{"#n":"name","#m":"x"}`,
		`{"n":"name"}`},
	"ExpressionAttributeValues":           {`{":v":{"S":"x"}}`, `{}`, `null`, `{":v":{"S":1}}`, `{"v":{"S":"x"}}`, `[]`},
	"ReturnConsumedCapacity":              {`"TOTAL"`, `"INDEXES"`, `"NONE"`, `"total"`, `""`, `null`, `5`},
	"ReturnValues":                        {`"ALL_OLD"`, `"NONE"`, `"ALL_NEW"`, `"bogus"`, `""`, `null`},
	"ReturnValuesOnConditionCheckFailure": {`"ALL_OLD"`, `"NONE"`, `"x"`, `null`},
	"AttributesToGet":                     {`["name"]`, `[]`, `null`, `[5]`},
	"Expected":                            {`{"pk":{"Exists":false}}`, `null`, `{"pk":{"Exists":"x"}}`},
	"ConditionalOperator":                 {`"AND"`, `"XOR"`},
	"ReturnItemCollectionMetrics":         {`"SIZE"`, `"x"`},
	"tablename":                           {`"cpu"`},
	"Foo":                                 {`1`, `{"a":[1,2]}`},
}

// checkedBodies draws n bodies of op: mostly members of its own, sometimes
// one of another operation or none, twice, in any order, spaced or not,
// and in one of four a byte or two changed (JSON, UTF-8 and escapes).
func checkedBodies(r *rand.Rand, op string, n int) [][]byte {
	own := map[string][]string{
		"GetItem": {"TableName", "Key", "ConsistentRead", "ProjectionExpression", "ExpressionAttributeNames", "ReturnConsumedCapacity"},
		"PutItem": {"TableName", "Item", "ConditionExpression", "ExpressionAttributeNames", "ExpressionAttributeValues", "ReturnValues",
			"ReturnValuesOnConditionCheckFailure", "ReturnConsumedCapacity"},
	}[op]
	var all []string
	for k := range checkedMembers {
		all = append(all, k)
	}
	all = sortedStrings(all)
	const alphabet = "{}[],:\"\\ 0123456789.eEtfnulrsu\x00\x1f\xff\xc3\xa9\t\n#:"
	var out [][]byte
	for range n {
		var parts []string
		for _, m := range own {
			required := m == "TableName" || m == "Key" || m == "Item"
			if (required && r.IntN(10) == 0) || (!required && r.IntN(2) == 0) {
				continue
			}
			parts = append(parts, member(r, m))
			if r.IntN(30) == 0 {
				parts = append(parts, member(r, m)) // twice
			}
		}
		if r.IntN(6) == 0 {
			parts = append(parts, member(r, all[r.IntN(len(all))]))
		}
		r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		sep := ","
		if r.IntN(4) == 0 {
			sep = " ,\n "
		}
		b := []byte("{" + strings.Join(parts, sep) + "}")
		if r.IntN(4) == 0 {
			for range 1 + r.IntN(2) {
				switch k := r.IntN(4); {
				case k == 0 && len(b) > 0:
					i := r.IntN(len(b))
					b = append(b[:i], b[i+1:]...)
				case k == 1 && len(b) > 0:
					b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
				case k == 2:
					i := r.IntN(len(b) + 1)
					b = append(b[:i:i], append([]byte(`\udc00`), b[i:]...)...)
				default:
					i := r.IntN(len(b) + 1)
					b = append(b[:i:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[i:]...)...)
				}
			}
		}
		out = append(out, b)
	}
	return out
}

// member draws a member: its first (valid) value more often than not.
func member(r *rand.Rand, name string) string {
	vs := checkedMembers[name]
	v := vs[0]
	if r.IntN(3) == 0 {
		v = vs[r.IntN(len(vs))]
	}
	return `"` + name + `":` + v
}

func sortedStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

// TestY8_ValidTextAsValidThenCheckUTF8: the front's one pass
// (ddbjson.ValidText) says what ddbjson.Valid and then checkUTF8 said of
// the same bodies: the JSON verdict always, and text exactly when
// checkUTF8 finds nothing in a valid body.
func TestY8_ValidTextAsValidThenCheckUTF8(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	seeds := []string{`{"a":"\ud83d\ude00"}`, `{"a":"\ud83d"}`, `{"a":"\ude00"}`, `{"a":"\ud83d\u0041"}`, `{"a":"\ud83d\\ude00"}`,
		`{"a":"\\ud800"}`, `{"\udc00":1}`, "{\"a\":\"\xff\"}", "{\"a\":\"\xc3\xa9\"}", "{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\xf4\x90\x80\x80\"}",
		`{"a":"\uD800\uDC00"}`, `{"a":"\uDBFF\uDFFF x"}`, `["\ud800","ok"]`, `"\ud800"`, "\"\xe6\x97\xa5\"", `{"a":"\ud800\u"}`}
	bodies := [][]byte{}
	for _, s := range seeds {
		bodies = append(bodies, []byte(s))
	}
	for _, op := range []string{"GetItem", "PutItem"} {
		bodies = append(bodies, checkedBodies(r, op, 10000)...)
	}
	texts, notTexts := 0, 0
	for _, b := range bodies {
		valid, text := ddbjson.ValidText(b)
		if valid != ddbjson.Valid(b) {
			t.Fatalf("ValidText(%q): valid %v, Valid %v", b, valid, !valid)
		}
		if !valid {
			continue
		}
		if want := checkUTF8(b) == nil; text != want {
			t.Fatalf("ValidText(%q): text %v, checkUTF8 %v", b, text, checkUTF8(b))
		}
		if text {
			texts++
		} else {
			notTexts++
		}
	}
	if texts < 1000 || notTexts < 100 {
		t.Fatalf("the bodies were %d valid texts and %d valid non-texts: too few of one to compare", texts, notTexts)
	}
}

// checkedAgrees fails t when the checked read of op takes body (valid
// JSON, its strings text) and the checking path does not take it
// unchanged, or reads another input from it; it reports whether the
// checked read took it.
func checkedAgrees(t *testing.T, op string, body []byte) bool {
	t.Helper()
	ctx := context.Background()
	var fast, slow walkedInput
	switch op {
	case "GetItem":
		fast, slow = new(getItemInput), new(getItemInput)
	default:
		fast, slow = new(putItemInput), new(putItemInput)
	}
	if !readChecked(body, fast) {
		if g, ok := fast.(*getItemInput); ok {
			putKey(g.keyMap)
		}
		return false
	}
	checked, err := checkRequest(ctx, reqshape.Ops[op], body, true)
	if err != nil || string(checked) != string(body) {
		t.Fatalf("%s %s: the checked read took it, checkRequest answered %v (body changed: %v)", op, body, err, string(checked) != string(body))
	}
	if err := decode(ctx, body, slow); err != nil {
		t.Fatalf("%s %s: the checked read took it, decode answered %v", op, body, err)
	}
	if g, ok := fast.(*getItemInput); ok {
		s := slow.(*getItemInput)
		putKey(g.keyMap)
		putKey(s.keyMap)
		g.keyMap, s.keyMap = nil, nil
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%s %s: the checked read read %+v, decode %+v", op, body, fast, slow)
	}
	return true
}

// FuzzY8_CheckedReadAsWalkThenDecode is TestY8_CheckedReadAsWalkThenDecode
// on the fuzzer's bodies.
func FuzzY8_CheckedReadAsWalkThenDecode(f *testing.F) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, op := range []string{"GetItem", "PutItem"} {
		for _, b := range checkedBodies(r, op, 40) {
			if len(b) < 4096 {
				f.Add(op == "GetItem", b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, get bool, body []byte) {
		if valid, text := ddbjson.ValidText(body); !valid || !text {
			return
		}
		op := "PutItem"
		if get {
			op = "GetItem"
		}
		checkedAgrees(t, op, body)
	})
}

// FuzzY8_ValidTextAsValidThenCheckUTF8 is
// TestY8_ValidTextAsValidThenCheckUTF8 on the fuzzer's bodies.
func FuzzY8_ValidTextAsValidThenCheckUTF8(f *testing.F) {
	for _, s := range []string{`{"a":"\ud83d\ude00"}`, `{"a":"\ud83d"}`, "{\"a\":\"\xff\"}", `{"TableName":"cpu","Key":{"pk":{"S":"é"}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		valid, text := ddbjson.ValidText(b)
		if valid != ddbjson.Valid(b) {
			t.Fatalf("ValidText(%q): valid %v, Valid %v", b, valid, !valid)
		}
		if want := checkUTF8(b) == nil; valid && text != want {
			t.Fatalf("ValidText(%q): text %v, checkUTF8 %v", b, text, checkUTF8(b))
		}
	})
}

// TestY8_CheckedReadAsWalkThenDecode: whenever the checked read of a
// GetItem or PutItem takes a body, the checking path (checkRequest, then
// decode) takes it too, unchanged and without an error, and reads the same
// input from it; so the checked read changes no answer and no error's
// order (whatever it does not take goes to that path from the start).
func TestY8_CheckedReadAsWalkThenDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, op := range []string{"GetItem", "PutItem"} {
		taken, left := 0, 0
		for _, body := range checkedBodies(r, op, 15000) {
			if valid, text := ddbjson.ValidText(body); !valid || !text {
				continue
			}
			if checkedAgrees(t, op, body) {
				taken++
			} else {
				left++
			}
		}
		if taken < 1000 || left < 1000 {
			t.Fatalf("%s: the checked read took %d bodies and left %d: too few of one to compare", op, taken, left)
		}
	}
}

// TestY8_CheckedReadAnswersAsTheCheckingPath: two servers, one with the
// checked read and one without, given the same GetItems and PutItems
// (valid, invalid, several errors at once) answer each byte for byte
// alike.
func TestY8_CheckedReadAnswersAsTheCheckingPath(t *testing.T) {
	servers := []*Server{startServer(t, Options{AllowUnsigned: true}), startServer(t, Options{AllowUnsigned: true})}
	servers[1].uncheckedReads = true
	ctx := context.Background()
	ask := func(s *Server, op string, body []byte) string {
		q := &request{target: dynamoPrefix + op, contentType: contentType}
		rep, ok := s.handle(ctx, "id", q, body)
		return fmt.Sprintf("%v %d %s %s", ok, rep.status, rep.ct, rep.body)
	}
	create := []byte(`{"TableName":"cpu","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}]}`)
	for _, s := range servers {
		if a := ask(s, "CreateTable", create); !strings.HasPrefix(a, "true 200") {
			t.Fatalf("CreateTable: %s", a)
		}
		if a := ask(s, "PutItem", []byte(`{"TableName":"cpu","Item":{"pk":{"S":"g"},"sk":{"N":"7"},"name":{"S":"n"}}}`)); !strings.HasPrefix(a, "true 200") {
			t.Fatalf("PutItem: %s", a)
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	oks := 0
	for i := range 3000 {
		op := []string{"GetItem", "PutItem"}[i%2]
		body := checkedBodies(r, op, 1)[0]
		a, b := ask(servers[0], op, body), ask(servers[1], op, body)
		if a != b {
			t.Fatalf("%s %s:\nwith the checked read: %.600s\nwithout: %.600s", op, body, a, b)
		}
		if strings.HasPrefix(a, "true 200") {
			oks++
		}
	}
	if oks < 200 {
		t.Fatalf("only %d of the requests were answered 200: too few to compare", oks)
	}
}
