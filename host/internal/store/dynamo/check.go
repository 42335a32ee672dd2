package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Problems CheckTable finds in a table (TableCheck.Problem).
const (
	ProblemMissing  = "does not exist"
	ProblemNoStream = "has no stream"
)

// TableCheck is what CheckTable found wrong with a table: Problem is one of
// ProblemMissing and ProblemNoStream; "" when nothing.
type TableCheck struct {
	Problem string
}

// CheckTable reads the table's description, changing nothing: a table
// that does not exist, or that needs a stream and has none, is reported in
// the TableCheck; any other failure (the endpoint unreachable, a key schema
// other than the spec's) is the error.
func (d *DB) CheckTable(ctx context.Context, spec TableSpec) (TableCheck, error) {
	out, err := d.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(spec.Name)}, d.opt)
	var rnf *types.ResourceNotFoundException
	switch {
	case errors.As(err, &rnf):
		return TableCheck{Problem: ProblemMissing}, nil
	case err != nil:
		return TableCheck{}, mapError("DescribeTable "+spec.Name, err)
	}
	if err := checkKeys(spec, out.Table); err != nil {
		return TableCheck{}, err
	}
	if ss := out.Table.StreamSpecification; spec.Stream && (ss == nil || !aws.ToBool(ss.StreamEnabled)) {
		return TableCheck{Problem: ProblemNoStream}, nil
	}
	return TableCheck{}, nil
}

// checkKeys reports a table whose key schema is not the spec's.
func checkKeys(spec TableSpec, t *types.TableDescription) error {
	var have []string
	for _, k := range t.KeySchema {
		if k.KeyType == types.KeyTypeHash {
			have = append([]string{aws.ToString(k.AttributeName)}, have...)
		} else {
			have = append(have, aws.ToString(k.AttributeName))
		}
	}
	if fmt.Sprint(have) != fmt.Sprint(spec.KeyAttrs) {
		return fmt.Errorf("table %s exists keyed by %v, but the configuration keys it by %v: fix the configuration's key, or use another table", spec.Name, have, spec.KeyAttrs)
	}
	return nil
}
