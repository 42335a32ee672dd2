package ddblocal

import (
	"github.com/dynafold/dynafold/ddblocal/internal/wire"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// The envelope reader (envelope.go) for BatchGetItem: a batch's read of
// its rows, 100 keys at a time. A table named twice in RequestItems (which
// encoding/json merges into one), AttributesToGet and anything else the
// reader does not know make it give up: encoding/json decodes those.

func (in *batchGetInput) member(e *envelope, name string) (bool, error) {
	switch name {
	case "RequestItems":
		if in.RequestItems != nil {
			return false, nil
		}
		return e.setRequestItems(&in.RequestItems)
	case "ReturnConsumedCapacity":
		return e.setStr(&in.ReturnConsumedCapacity)
	}
	return false, nil
}

// setRequestItems reads RequestItems: table names to their keys.
func (e *envelope) setRequestItems(p *map[string]*keysAndAttrs) (bool, error) {
	if !e.punct('{') {
		return false, nil
	}
	m := make(map[string]*keysAndAttrs, 1)
	if e.punct('}') {
		*p = m
		return true, nil
	}
	for {
		name, ok := e.str()
		if !ok {
			return false, nil
		}
		if _, dup := m[name]; dup {
			return false, nil
		}
		if e.ws(); !e.punct(':') {
			return false, nil
		}
		ka := new(keysAndAttrs)
		m[name] = ka
		if ok, err := e.object(ka); !ok || err != nil {
			return ok, err
		}
		e.ws()
		switch {
		case e.punct(','):
		case e.punct('}'):
			*p = m
			return true, nil
		default:
			return false, nil
		}
	}
}

func (ka *keysAndAttrs) member(e *envelope, name string) (bool, error) {
	switch name {
	case "Keys":
		if ka.Keys != nil {
			return false, nil
		}
		return e.setKeys(&ka.Keys)
	case "ConsistentRead":
		return e.setBool(&ka.ConsistentRead)
	case "ProjectionExpression":
		return e.setStrPtr(&ka.ProjectionExpression)
	case "ExpressionAttributeNames":
		return e.setNames(&ka.ExpressionAttributeNames)
	}
	return false, nil
}

// setKeys reads an array of keys, which share their attribute names'
// strings.
func (e *envelope) setKeys(p *[]wire.RequestItem) (bool, error) {
	keys := make([]wire.RequestItem, 0, 16)
	var names ddbjson.ItemDecoder
	ok, err := e.array(func() (bool, error) {
		keys = append(keys, wire.RequestItem{})
		k := &keys[len(keys)-1]
		if e.peek() == '{' {
			if end, ok := k.DecodeAtShared(e.b, e.pos, &names); ok {
				e.pos = end
				return true, nil
			}
		}
		return e.setItem(k)
	})
	if ok && err == nil {
		*p = keys
	}
	return ok, err
}
