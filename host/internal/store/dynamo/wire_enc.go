package dynamo

import (
	"bytes"
	"fmt"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// enc writes a request's DynamoDB JSON straight from abi values (the wire
// path: no types.AttributeValue in between). The first error sticks.
type enc struct {
	b     *bytes.Buffer
	comma bool // a member was written at this level
	err   error
}

func (e *enc) open()  { e.b.WriteByte('{'); e.comma = false }
func (e *enc) close() { e.b.WriteByte('}'); e.comma = true }

// key writes a member's name (and the comma before it).
func (e *enc) key(k string) {
	if e.comma {
		e.b.WriteByte(',')
	}
	e.b.WriteByte('"')
	e.b.WriteString(k) // the protocol's member names need no escaping
	e.b.WriteString(`":`)
	e.comma = true
}

func (e *enc) str(k, v string) {
	e.key(k)
	ddbjson.AppendString(e.b, v)
}

func (e *enc) boolean(k string, v bool) {
	e.key(k)
	if v {
		e.b.WriteString("true")
	} else {
		e.b.WriteString("false")
	}
}

func (e *enc) item(k string, it abi.Item) {
	e.key(k)
	if err := ddbjson.AppendItem(e.b, it); err != nil && e.err == nil {
		e.err = fmt.Errorf("%s: %w: %w", k, ddbclient.ErrInvalidValue, err)
	}
}

// expr writes the expression attribute names and values of one or two
// expressions (an update's and its condition's), merged.
func (e *enc) expr(names map[string]string, vals1, vals2 map[string]abi.Value) {
	if len(names) > 0 {
		e.key("ExpressionAttributeNames")
		e.b.WriteByte('{')
		first := true
		for k, v := range names {
			if !first {
				e.b.WriteByte(',')
			}
			first = false
			ddbjson.AppendString(e.b, k)
			e.b.WriteByte(':')
			ddbjson.AppendString(e.b, v)
		}
		e.b.WriteByte('}')
	}
	vals := vals1
	if len(vals2) > 0 {
		if len(vals1) == 0 {
			vals = vals2
		} else {
			vals = make(map[string]abi.Value, len(vals1)+len(vals2))
			for k, v := range vals1 {
				vals[k] = v
			}
			for k, v := range vals2 {
				vals[k] = v
			}
		}
	}
	if len(vals) > 0 {
		e.item("ExpressionAttributeValues", vals)
	}
}

func mergedNames(a, b map[string]string) map[string]string {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	m := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

func condParts(c *store.Cond) (string, map[string]string, map[string]abi.Value) {
	if c == nil {
		return "", nil, nil
	}
	return c.Expr, c.Names, c.Values
}

// cond writes a condition expression and its names and values.
func (e *enc) cond(c *store.Cond) {
	expr, names, vals := condParts(c)
	if expr != "" {
		e.str("ConditionExpression", expr)
	}
	e.expr(names, vals, nil)
}

func (e *enc) put(p store.Put) {
	e.open()
	e.str("TableName", p.Table)
	e.item("Item", p.Item)
	e.cond(p.Cond)
	e.close()
}

func (e *enc) update(u store.Update, returnNew bool) {
	e.open()
	e.str("TableName", u.Table)
	e.item("Key", u.Key)
	e.str("UpdateExpression", u.Expr)
	expr, names, vals := condParts(u.Cond)
	if expr != "" {
		e.str("ConditionExpression", expr)
	}
	e.expr(mergedNames(u.Names, names), u.Values, vals)
	if returnNew {
		e.str("ReturnValues", "ALL_NEW")
	}
	e.close()
}

func (e *enc) delete(d store.Delete) {
	e.open()
	e.str("TableName", d.Table)
	e.item("Key", d.Key)
	e.cond(d.Cond)
	e.close()
}

func (e *enc) check(c store.Check) {
	e.open()
	e.str("TableName", c.Table)
	e.item("Key", c.Key)
	e.str("ConditionExpression", c.Cond.Expr)
	e.expr(c.Cond.Names, c.Cond.Values, nil)
	e.close()
}

// write writes one TransactItems element.
func (e *enc) write(w store.Write) error {
	set := 0
	e.open()
	if w.Put != nil {
		set++
		e.key("Put")
		e.put(*w.Put)
	}
	if w.Update != nil {
		set++
		e.key("Update")
		e.update(*w.Update, false)
	}
	if w.Delete != nil {
		set++
		e.key("Delete")
		e.delete(*w.Delete)
	}
	if w.Check != nil {
		set++
		e.key("ConditionCheck")
		e.check(*w.Check)
	}
	e.close()
	if set != 1 {
		return fmt.Errorf("a transaction write needs exactly one of Put, Update, Delete, Check; %d set", set)
	}
	return nil
}
