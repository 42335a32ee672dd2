package ddblocal

// The envelope reader (envelope.go) for Query: a gap's read of the event
// store and the outbox's read of a row's pending effects. The legacy
// parameters (KeyConditions, QueryFilter, AttributesToGet…) are members
// the reader does not know: encoding/json decodes those bodies.

func (in *queryInput) member(e *envelope, name string) (bool, error) {
	switch name {
	case "TableName":
		return e.setStr(&in.TableName)
	case "IndexName":
		return e.setStrPtr(&in.IndexName)
	case "Select":
		return e.setStr(&in.Select)
	case "Limit":
		return e.setIntPtr(&in.Limit)
	case "ConsistentRead":
		return e.setBool(&in.ConsistentRead)
	case "ExclusiveStartKey":
		return e.setItem(&in.ExclusiveStartKey)
	case "ProjectionExpression":
		return e.setStrPtr(&in.ProjectionExpression)
	case "FilterExpression":
		return e.setStrPtr(&in.FilterExpression)
	case "KeyConditionExpression":
		return e.setStrPtr(&in.KeyConditionExpression)
	case "ScanIndexForward":
		var b bool
		ok, err := e.setBool(&b)
		if ok {
			in.ScanIndexForward = &b
		}
		return ok, err
	case "ReturnConsumedCapacity":
		return e.setStr(&in.ReturnConsumedCapacity)
	case "ExpressionAttributeNames":
		return e.setNames(&in.ExpressionAttributeNames)
	case "ExpressionAttributeValues":
		return e.setValues(&in.ExpressionAttributeValues)
	}
	return false, nil
}

// setIntPtr reads an integer of at most 18 digits (no fraction, no
// exponent: encoding/json's error for those is its own) into a *int.
func (e *envelope) setIntPtr(p **int) (bool, error) {
	i, neg := e.pos, false
	if i < len(e.b) && e.b[i] == '-' {
		neg = true
		i++
	}
	start, n := i, 0
	for ; i < len(e.b) && e.b[i] >= '0' && e.b[i] <= '9'; i++ {
		n = n*10 + int(e.b[i]-'0')
	}
	digits := i - start
	if digits == 0 || digits > 18 || (digits > 1 && e.b[start] == '0') {
		return false, nil
	}
	if i < len(e.b) && (e.b[i] == '.' || e.b[i] == 'e' || e.b[i] == 'E') {
		return false, nil
	}
	if neg {
		n = -n
	}
	e.pos = i
	*p = &n
	return true, nil
}
