package quarantine

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Gone reports which of the entry ids the table no longer holds (replayed,
// or deleted), with consistent reads, 100 ids a request.
func (t *Table) Gone(ctx context.Context, ids []string) (map[string]bool, error) {
	gone := map[string]bool{}
	for start := 0; start < len(ids); start += 100 {
		chunk := ids[start:min(start+100, len(ids))]
		keys := make([]map[string]types.AttributeValue, 0, len(chunk))
		seen := map[string]bool{}
		for _, id := range chunk {
			if !seen[id] {
				seen[id] = true
				keys = append(keys, map[string]types.AttributeValue{KeyAttribute: str(id)})
			}
		}
		found := map[string]bool{}
		req := map[string]types.KeysAndAttributes{t.name: {Keys: keys, ConsistentRead: aws.Bool(true), ProjectionExpression: aws.String("#id"),
			ExpressionAttributeNames: map[string]string{"#id": KeyAttribute}}}
		for len(req) > 0 {
			out, err := t.client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return nil, fmt.Errorf("quarantine table %s: reading entries: %w", t.name, err)
			}
			for _, it := range out.Responses[t.name] {
				if v, ok := it[KeyAttribute].(*types.AttributeValueMemberS); ok {
					found[v.Value] = true
				}
			}
			req = out.UnprocessedKeys
		}
		for id := range seen {
			if !found[id] {
				gone[id] = true
			}
		}
	}
	return gone, nil
}
