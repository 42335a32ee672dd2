package conformance

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
)

// TestConformance_Validation_ParameterRanges checks member constraints the
// API references list (valid ranges, lengths, name patterns).
func TestConformance_Validation_ParameterRanges(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	c := ddb(t)
	key := Item{"pk": s("a")}
	// skip, when set, names what dynalite 4.0.0 gets wrong against the
	// API reference (Scan: TotalSegments valid range 1 to 1,000,000).
	cases := []struct {
		name string
		skip string
		call func() error
	}{
		{"ScanTotalSegmentsOver1000000", "accepts TotalSegments over 1,000,000", func() error {
			_, err := c.Scan(ctx(t), &dynamodb.ScanInput{TableName: aws.String(tbl), Segment: aws.Int32(0), TotalSegments: aws.Int32(1_000_001)})
			return err
		}},
		{"ScanLimitZero", "", func() error {
			_, err := c.Scan(ctx(t), &dynamodb.ScanInput{TableName: aws.String(tbl), Limit: aws.Int32(0)})
			return err
		}},
		{"BatchGetNoKeys", "", func() error {
			_, err := c.BatchGetItem(ctx(t), &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{tbl: {Keys: []Item{}}}})
			return err
		}},
		{"BatchWriteNoRequests", "", func() error {
			_, err := c.BatchWriteItem(ctx(t), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{tbl: {}}})
			return err
		}},
		{"ListTablesLimitZero", "", func() error {
			_, err := c.ListTables(ctx(t), &dynamodb.ListTablesInput{Limit: aws.Int32(0)})
			return err
		}},
		{"TableNameOver255", "", func() error {
			_, err := c.GetItem(ctx(t), &dynamodb.GetItemInput{TableName: aws.String(strings.Repeat("t", 256)), Key: key})
			return err
		}},
		{"NamePlaceholderWithoutHash", "", func() error {
			_, err := c.GetItem(ctx(t), &dynamodb.GetItemInput{TableName: aws.String(tbl), Key: key, ProjectionExpression: aws.String("pk"),
				ExpressionAttributeNames: map[string]string{"x": "pk"}})
			return err
		}},
		{"ValuePlaceholderWithoutColon", "", func() error {
			_, err := c.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: key, ConditionExpression: aws.String("attribute_not_exists(pk)"),
				ExpressionAttributeValues: Item{"v": n("1")}})
			return err
		}},
		// GlobalSecondaryIndex reference: IndexName length 3 to 255.
		{"IndexNameTooShort", "", func() error {
			ks, ad := keySchema("")
			ad = append(ad, types.AttributeDefinition{AttributeName: aws.String("g"), AttributeType: types.ScalarAttributeTypeS})
			_, err := c.CreateTable(ctx(t), &dynamodb.CreateTableInput{TableName: aws.String(tableName(t)), KeySchema: ks, AttributeDefinitions: ad,
				BillingMode: types.BillingModePayPerRequest, GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{IndexName: aws.String("ab"),
					KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("g"), KeyType: types.KeyTypeHash}}, Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}}})
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != "" {
				skipOnDynalite(t, tc.skip)
			}
			requireValidation(t, tc.call(), tc.name)
		})
	}
}

// TestConformance_Streams_ParameterRanges: Limit ranges of the Streams API
// (DescribeStream and ListStreams 1-100, GetRecords 1-1000) and unknown ARNs.
func TestConformance_Streams_ParameterRanges(t *testing.T) {
	t.Parallel()
	requireStreams(t)
	_, arn := streamTable(t, types.StreamViewTypeKeysOnly)
	sc := streams(t)
	_, err := sc.DescribeStream(ctx(t), &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn), Limit: aws.Int32(101)})
	requireValidation(t, err, "DescribeStream Limit 101")
	_, err = sc.ListStreams(ctx(t), &dynamodbstreams.ListStreamsInput{Limit: aws.Int32(101)})
	requireValidation(t, err, "ListStreams Limit 101")
	_, err = sc.ListStreams(ctx(t), &dynamodbstreams.ListStreamsInput{Limit: aws.Int32(0)})
	requireValidation(t, err, "ListStreams Limit 0")
	_, err = sc.GetShardIterator(ctx(t), &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn + "0"),
		ShardId: aws.String("shardId-00000000000000000000-00000000"), ShardIteratorType: "TRIM_HORIZON"})
	requireCode(t, err, "ResourceNotFoundException", "GetShardIterator of an unknown stream")
}
