package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TableSpec is a table the host needs: its name, its key attributes (hash,
// then range; all strings), and whether it needs a stream of new images.
type TableSpec struct {
	Name     string
	KeyAttrs []string
	Stream   bool
	Indexes  []IndexSpec // global secondary indexes (projecting every attribute)
	// Tags are put on the table when it is created, and added to an
	// existing table that lacks them (TagResource).
	Tags map[string]string
}

// IndexSpec is a global secondary index the host needs: its name and key
// attributes (hash, then range; all strings). Items without them are not
// in the index (a sparse index).
type IndexSpec struct {
	Name     string
	KeyAttrs []string
}

func (ix IndexSpec) keySchema() []types.KeySchemaElement {
	var ks []types.KeySchemaElement
	for i, a := range ix.KeyAttrs {
		kt := types.KeyTypeHash
		if i > 0 {
			kt = types.KeyTypeRange
		}
		ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(a), KeyType: kt})
	}
	return ks
}

// attrDefs returns the attribute definitions of keys (strings), each once.
func attrDefs(keys ...[]string) []types.AttributeDefinition {
	var out []types.AttributeDefinition
	seen := map[string]bool{}
	for _, ks := range keys {
		for _, a := range ks {
			if !seen[a] {
				seen[a] = true
				out = append(out, types.AttributeDefinition{AttributeName: aws.String(a), AttributeType: types.ScalarAttributeTypeS})
			}
		}
	}
	return out
}

// TableState is what EnsureTable found or did.
type TableState struct {
	Created       bool     // the table did not exist and was created
	StreamEnabled bool     // the table existed without a usable stream, and one was enabled
	IndexesAdded  []string // the table existed without these indexes, and they were added
	TagsAdded     []string // the tags (keys) the table was created with, or that were added to it
}

// EnsureTable creates the table when it does not exist (on-demand
// capacity), enables a NEW_IMAGE stream on an existing one that needs it and
// has none, and waits until it is active. A table whose key schema differs
// from the spec is an error naming both.
func (d *DB) EnsureTable(ctx context.Context, spec TableSpec) (TableState, error) {
	var st TableState
	out, err := d.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(spec.Name)}, d.opt)
	var rnf *types.ResourceNotFoundException
	switch {
	case errors.As(err, &rnf):
		in := &dynamodb.CreateTableInput{TableName: aws.String(spec.Name), BillingMode: types.BillingModePayPerRequest}
		for i, a := range spec.KeyAttrs {
			kt := types.KeyTypeHash
			if i > 0 {
				kt = types.KeyTypeRange
			}
			in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(a), KeyType: kt})
		}
		keys := [][]string{spec.KeyAttrs}
		for _, ix := range spec.Indexes {
			keys = append(keys, ix.KeyAttrs)
			in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{IndexName: aws.String(ix.Name),
				KeySchema: ix.keySchema(), Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}})
		}
		in.AttributeDefinitions = attrDefs(keys...)
		if spec.Stream {
			in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}
		}
		in.Tags = tagList(spec.Tags)
		st.TagsAdded = sortedKeys(spec.Tags)
		if _, err := d.client.CreateTable(ctx, in, d.opt); err != nil {
			return st, mapError("CreateTable "+spec.Name, err)
		}
		st.Created = true
	case err != nil:
		return st, mapError("DescribeTable "+spec.Name, err)
	default:
		if err := checkKeys(spec, out.Table); err != nil {
			return st, err
		}
		ss := out.Table.StreamSpecification
		if spec.Stream && (ss == nil || !aws.ToBool(ss.StreamEnabled)) {
			_, err := d.client.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(spec.Name),
				StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}}, d.opt)
			if err != nil {
				return st, mapError("UpdateTable "+spec.Name, err)
			}
			st.StreamEnabled = true
		} else if spec.Stream && ss.StreamViewType != types.StreamViewTypeNewImage && ss.StreamViewType != types.StreamViewTypeNewAndOldImages {
			return st, fmt.Errorf("table %s has a %s stream; the host reads new images: disable the stream and run this again, or set its view type to NEW_IMAGE or NEW_AND_OLD_IMAGES", spec.Name, ss.StreamViewType)
		}
		added, err := d.addIndexes(ctx, spec, out.Table)
		if err != nil {
			return st, err
		}
		st.IndexesAdded = added
		if st.TagsAdded, err = d.addTags(ctx, spec, aws.ToString(out.Table.TableArn)); err != nil {
			return st, err
		}
	}
	w := dynamodb.NewTableExistsWaiter(d.client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 50*time.Millisecond, 2*time.Second
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(spec.Name)}, 5*time.Minute); err != nil {
		return st, fmt.Errorf("waiting for table %s to become active: %w", spec.Name, err)
	}
	return st, nil
}

// addIndexes adds the spec's indexes an existing table lacks; an index of
// the same name with other keys is an error naming both.
func (d *DB) addIndexes(ctx context.Context, spec TableSpec, t *types.TableDescription) ([]string, error) {
	var added []string
	for _, ix := range spec.Indexes {
		var have *types.GlobalSecondaryIndexDescription
		for i := range t.GlobalSecondaryIndexes {
			if aws.ToString(t.GlobalSecondaryIndexes[i].IndexName) == ix.Name {
				have = &t.GlobalSecondaryIndexes[i]
			}
		}
		if have != nil {
			var keys []string
			for _, k := range ix.keySchema() {
				for _, h := range have.KeySchema {
					if h.KeyType == k.KeyType {
						keys = append(keys, aws.ToString(h.AttributeName))
					}
				}
			}
			if fmt.Sprint(keys) != fmt.Sprint(ix.KeyAttrs) {
				return added, fmt.Errorf("table %s has an index %s keyed by %v, but the configuration needs it keyed by %v: name another index in the configuration, or delete this one", spec.Name, ix.Name, keys, ix.KeyAttrs)
			}
			continue
		}
		_, err := d.client.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(spec.Name),
			AttributeDefinitions: attrDefs(ix.KeyAttrs),
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
				IndexName: aws.String(ix.Name), KeySchema: ix.keySchema(), Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}}}}, d.opt)
		if err != nil {
			return added, mapError("UpdateTable "+spec.Name+" (adding index "+ix.Name+")", err)
		}
		added = append(added, ix.Name)
	}
	return added, nil
}
