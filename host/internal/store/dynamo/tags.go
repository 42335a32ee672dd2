package dynamo

import (
	"context"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// addTags puts the spec's tags that the existing table lacks (or has with
// another value) on it, and returns their keys.
func (d *DB) addTags(ctx context.Context, spec TableSpec, arn string) ([]string, error) {
	if len(spec.Tags) == 0 || arn == "" {
		return nil, nil
	}
	have := map[string]string{}
	in := &dynamodb.ListTagsOfResourceInput{ResourceArn: aws.String(arn)}
	for {
		out, err := d.client.ListTagsOfResource(ctx, in, d.opt)
		if err != nil {
			return nil, mapError("ListTagsOfResource "+spec.Name, err)
		}
		for _, t := range out.Tags {
			have[aws.ToString(t.Key)] = aws.ToString(t.Value)
		}
		if out.NextToken == nil {
			break
		}
		in.NextToken = out.NextToken
	}
	missing := map[string]string{}
	for k, v := range spec.Tags {
		if w, ok := have[k]; !ok || w != v {
			missing[k] = v
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	if _, err := d.client.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: aws.String(arn), Tags: tagList(missing)}, d.opt); err != nil {
		return nil, mapError("TagResource "+spec.Name, err)
	}
	return sortedKeys(missing), nil
}

func tagList(tags map[string]string) []types.Tag {
	var out []types.Tag
	for _, k := range sortedKeys(tags) {
		out = append(out, types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
