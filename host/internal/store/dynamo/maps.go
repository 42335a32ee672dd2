package dynamo

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

func valuesMap(vals map[string]abi.Value) (map[string]types.AttributeValue, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	return ddbclient.ToAttributeMap(vals)
}

func namesMap(names map[string]string) map[string]string {
	if len(names) == 0 {
		return nil
	}
	return names
}
