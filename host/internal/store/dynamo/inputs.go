package dynamo

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

// exprParts is a condition or update expression with its names and values
// converted and merged.
type exprParts struct {
	names  map[string]string
	values map[string]types.AttributeValue
}

func (e *exprParts) add(names map[string]string, values map[string]abi.Value) error {
	for k, v := range names {
		if e.names == nil {
			e.names = map[string]string{}
		}
		e.names[k] = v
	}
	for k, v := range values {
		av, err := ddbclient.ToAttributeValue(v)
		if err != nil {
			return fmt.Errorf("expression value %q: %w", k, err)
		}
		if e.values == nil {
			e.values = map[string]types.AttributeValue{}
		}
		e.values[k] = av
	}
	return nil
}

func condString(c *store.Cond) *string {
	if c == nil || c.Expr == "" {
		return nil
	}
	return aws.String(c.Expr)
}

func putInput(p store.Put) (*types.Put, error) {
	item, err := ddbclient.ToAttributeMap(p.Item)
	if err != nil {
		return nil, err
	}
	var e exprParts
	if p.Cond != nil {
		if err := e.add(p.Cond.Names, p.Cond.Values); err != nil {
			return nil, err
		}
	}
	return &types.Put{
		TableName:                 aws.String(p.Table),
		Item:                      item,
		ConditionExpression:       condString(p.Cond),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	}, nil
}

func updateInput(u store.Update) (*types.Update, error) {
	key, err := ddbclient.ToAttributeMap(u.Key)
	if err != nil {
		return nil, err
	}
	var e exprParts
	if err := e.add(u.Names, u.Values); err != nil {
		return nil, err
	}
	if u.Cond != nil {
		if err := e.add(u.Cond.Names, u.Cond.Values); err != nil {
			return nil, err
		}
	}
	return &types.Update{
		TableName:                 aws.String(u.Table),
		Key:                       key,
		UpdateExpression:          aws.String(u.Expr),
		ConditionExpression:       condString(u.Cond),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	}, nil
}

func deleteInput(d store.Delete) (*types.Delete, error) {
	key, err := ddbclient.ToAttributeMap(d.Key)
	if err != nil {
		return nil, err
	}
	var e exprParts
	if d.Cond != nil {
		if err := e.add(d.Cond.Names, d.Cond.Values); err != nil {
			return nil, err
		}
	}
	return &types.Delete{
		TableName:                 aws.String(d.Table),
		Key:                       key,
		ConditionExpression:       condString(d.Cond),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	}, nil
}

func checkInput(c store.Check) (*types.ConditionCheck, error) {
	key, err := ddbclient.ToAttributeMap(c.Key)
	if err != nil {
		return nil, err
	}
	var e exprParts
	if err := e.add(c.Cond.Names, c.Cond.Values); err != nil {
		return nil, err
	}
	return &types.ConditionCheck{
		TableName:                 aws.String(c.Table),
		Key:                       key,
		ConditionExpression:       aws.String(c.Cond.Expr),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	}, nil
}

func transactItem(w store.Write) (types.TransactWriteItem, error) {
	set := 0
	var ti types.TransactWriteItem
	var err error
	if w.Put != nil {
		set++
		ti.Put, err = putInput(*w.Put)
	}
	if w.Update != nil && err == nil {
		set++
		ti.Update, err = updateInput(*w.Update)
	}
	if w.Delete != nil && err == nil {
		set++
		ti.Delete, err = deleteInput(*w.Delete)
	}
	if w.Check != nil && err == nil {
		set++
		ti.ConditionCheck, err = checkInput(*w.Check)
	}
	if err != nil {
		return ti, err
	}
	if set != 1 {
		return ti, fmt.Errorf("a transaction write needs exactly one of Put, Update, Delete, Check; %d set", set)
	}
	return ti, nil
}
