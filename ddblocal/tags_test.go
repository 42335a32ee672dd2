package ddblocal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

func tagsOf(t *testing.T, c *dynamodb.Client, arn string) map[string]string {
	t.Helper()
	out, err := c.ListTagsOfResource(context.Background(), &dynamodb.ListTagsOfResourceInput{ResourceArn: aws.String(arn)})
	if err != nil {
		t.Fatalf("ListTagsOfResource: %v", err)
	}
	m := map[string]string{}
	for _, tg := range out.Tags {
		m[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
	}
	return m
}

func tagsIn(kv ...string) []types.Tag {
	var out []types.Tag
	for i := 0; i < len(kv); i += 2 {
		out = append(out, types.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])})
	}
	return out
}

// apiCode returns the error code of an API error and its message.
func apiCode(err error) (string, string) {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode(), ae.ErrorMessage()
	}
	return "", fmt.Sprint(err)
}

// Tags are put at CreateTable and by TagResource (a key given again takes
// the new value), removed by UntagResource (a key the table lacks is no
// error), listed by ListTagsOfResource, and kept across a restart on the
// same data directory.
func TestD1_TagsAreSetListedRemovedAndPersisted(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, Options{DataDir: dir})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "tagged", false, func(in *dynamodb.CreateTableInput) { in.Tags = tagsIn("dynafold:derived", "true", "team", "search") })
	d, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("tagged")})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(d.Table.TableArn)
	if got := tagsOf(t, c, arn); fmt.Sprint(got) != "map[dynafold:derived:true team:search]" {
		t.Fatalf("tags from CreateTable: %v", got)
	}
	if _, err := c.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: aws.String(arn), Tags: tagsIn("team", "ads", "dynafold:projection", "search summaries", "empty", "")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UntagResource(ctx, &dynamodb.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: []string{"empty", "never-there"}}); err != nil {
		t.Fatal(err)
	}
	want := "map[dynafold:derived:true dynafold:projection:search summaries team:ads]"
	if got := tagsOf(t, c, arn); fmt.Sprint(got) != want {
		t.Fatalf("tags = %v, want %s", got, want)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	srv2 := startServer(t, Options{DataDir: dir})
	if got := tagsOf(t, client(srv2, 1), arn); fmt.Sprint(got) != want {
		t.Fatalf("tags after a restart = %v, want %s", got, want)
	}
}

// Tag requests are checked as DynamoDB checks them: the parameters'
// constraints, an ARN that is no table's, the characters, the reserved
// aws: prefix and the limit of 50 tags; a refused request changes nothing,
// and a CreateTable with refused tags creates no table.
func TestD1_TagRequestsAreValidatedAsDynamoDBDoes(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "tab1", false)
	arn := srv.tableARN("tab1")
	cases := []struct {
		name string
		call func() error
		code string
		msg  string
	}{
		{"not an ARN", func() error {
			_, err := c.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: aws.String("I_do_not_exist"), Tags: tagsIn("a", "b")})
			return err
		}, "ValidationException", "Invalid ResourceArn provided as input I_do_not_exist"},
		{"no such table", func() error {
			_, err := c.ListTagsOfResource(ctx, &dynamodb.ListTagsOfResourceInput{ResourceArn: aws.String(arn + "x")})
			return err
		}, "ResourceNotFoundException", "Requested resource not found: ResourcArn: " + arn + "x not found"},
		{"no tags", func() error {
			_, err := c.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: aws.String(arn), Tags: []types.Tag{}})
			return err
		}, "ValidationException", "Value '[]' at 'tags' failed to satisfy constraint: Member must have length greater than or equal to 1"},
		{"empty key", func() error {
			_, err := c.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: aws.String(arn), Tags: tagsIn("", "v")})
			return err
		}, "ValidationException", "Value '' at 'tags.1.member.key' failed to satisfy constraint: Member must have length greater than or equal to 1"},
		{"long value", func() error {
			_, err := c.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: aws.String(arn), Tags: tagsIn("k", strings.Repeat("v", 257))})
			return err
		}, "ValidationException", "at 'tags.1.member.value' failed to satisfy constraint: Member must have length less than or equal to 256"},
		{"characters", func() error {
			_, err := c.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: aws.String(arn), Tags: tagsIn("ok", "#!%^&")})
			return err
		}, "ValidationException", "characters that are not allowed"},
		{"reserved prefix", func() error {
			_, err := c.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: aws.String(arn), Tags: tagsIn("aws:cloudformation:stack", "x")})
			return err
		}, "ValidationException", "aws: is reserved"},
	}
	for _, tc := range cases {
		code, msg := apiCode(tc.call())
		if code != tc.code || !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: %s %q, want %s containing %q", tc.name, code, msg, tc.code, tc.msg)
		}
	}
	var thirty, twentyMore []string
	for i := 0; i < 30; i++ {
		thirty = append(thirty, fmt.Sprint("k", i), "v")
	}
	for i := 30; i < 51; i++ {
		twentyMore = append(twentyMore, fmt.Sprint("k", i), "v")
	}
	if _, err := c.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: aws.String(arn), Tags: tagsIn(thirty...)}); err != nil {
		t.Fatal(err)
	}
	_, err := c.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: aws.String(arn), Tags: tagsIn(twentyMore...)})
	if code, msg := apiCode(err); code != "ValidationException" || !strings.Contains(msg, "limit of 50") {
		t.Errorf("51 tags: %s %q", code, msg)
	}
	if got := tagsOf(t, c, arn); len(got) != 30 {
		t.Errorf("a refused TagResource changed the tags: %d", len(got))
	}
	_, err = c.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("tab2"), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		Tags:                 tagsIn("aws:x", "y")})
	if code, _ := apiCode(err); code != "ValidationException" {
		t.Errorf("CreateTable with a reserved tag: %v", err)
	}
	if _, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("tab2")}); err == nil {
		t.Error("a CreateTable refused for its tags created the table")
	}
}
