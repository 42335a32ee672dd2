package ddblocal

// The envelope reader (envelope.go) for TransactWriteItems: the outbox's
// write, a row and its effects in one request, decoded without
// encoding/json's reflection (it was most of the operation's CPU). As for
// the single-item operations, anything the reader does not know makes it
// give up, and encoding/json decodes the body from the start; a member
// that comes twice where encoding/json would merge the two (the items'
// array, an item's operation) is such a thing.

func (in *transactWriteInput) member(e *envelope, name string) (bool, error) {
	switch name {
	case "TransactItems":
		if in.TransactItems != nil {
			return false, nil // encoding/json decodes into the elements already there
		}
		return e.setTxItems(&in.TransactItems)
	case "ClientRequestToken":
		return e.setStrPtr(&in.ClientRequestToken)
	case "ReturnConsumedCapacity":
		return e.setStr(&in.ReturnConsumedCapacity)
	}
	return false, nil
}

// setTxItems reads the array of TransactItems.
func (e *envelope) setTxItems(p *[]txItem) (bool, error) {
	items := make([]txItem, 0, 8)
	ok, err := e.array(func() (bool, error) {
		items = append(items, txItem{})
		return e.object(&items[len(items)-1])
	})
	if ok && err == nil {
		*p = items
	}
	return ok, err
}

// array reads the array at pos, elem reading each element (the reader at
// its start), and steps over it.
func (e *envelope) array(elem func() (bool, error)) (bool, error) {
	if !e.punct('[') {
		return false, nil
	}
	if e.punct(']') {
		return true, nil
	}
	for {
		if ok, err := elem(); !ok || err != nil {
			return ok, err
		}
		e.ws()
		switch {
		case e.punct(','):
		case e.punct(']'):
			return true, nil
		default:
			return false, nil
		}
	}
}

func (ti *txItem) member(e *envelope, name string) (bool, error) {
	switch name {
	case "Put":
		if ti.Put != nil {
			return false, nil
		}
		ti.Put = new(txPut)
		return e.object(ti.Put)
	case "Delete":
		return e.txKeyOp(&ti.Delete)
	case "Update":
		return e.txKeyOp(&ti.Update)
	case "ConditionCheck":
		return e.txKeyOp(&ti.ConditionCheck)
	}
	return false, nil
}

// txKeyOp reads a transaction's Delete, Update or ConditionCheck.
func (e *envelope) txKeyOp(p **txKeyOp) (bool, error) {
	if *p != nil {
		return false, nil
	}
	*p = new(txKeyOp)
	return e.object(*p)
}

func (in *txPut) member(e *envelope, name string) (bool, error) {
	switch name {
	case "TableName":
		return e.setStr(&in.TableName)
	case "Item":
		return e.setItem(&in.Item)
	case "ConditionExpression":
		return e.setStrPtr(&in.ConditionExpression)
	case "ReturnValuesOnConditionCheckFailure":
		return e.setStr(&in.ReturnValuesOnConditionCheckFailure)
	}
	return e.txExprMember(&in.exprInput, name)
}

func (in *txKeyOp) member(e *envelope, name string) (bool, error) {
	switch name {
	case "TableName":
		return e.setStr(&in.TableName)
	case "Key":
		return e.setItem(&in.Key)
	case "ConditionExpression":
		return e.setStrPtr(&in.ConditionExpression)
	case "UpdateExpression":
		return e.setStrPtr(&in.UpdateExpression)
	case "ReturnValuesOnConditionCheckFailure":
		return e.setStr(&in.ReturnValuesOnConditionCheckFailure)
	}
	return e.txExprMember(&in.exprInput, name)
}

// txExprMember reads the expression parameters of a transaction's item
// (it has no ReturnConsumedCapacity of its own).
func (e *envelope) txExprMember(ei *exprInput, name string) (bool, error) {
	switch name {
	case "ExpressionAttributeNames":
		return e.setNames(&ei.ExpressionAttributeNames)
	case "ExpressionAttributeValues":
		return e.setValues(&ei.ExpressionAttributeValues)
	}
	return false, nil
}
