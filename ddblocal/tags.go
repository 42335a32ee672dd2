package ddblocal

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

func init() {
	register("TagResource", tagResource)
	register("UntagResource", untagResource)
	register("ListTagsOfResource", listTagsOfResource)
}

// DynamoDB's tag limits.
const (
	maxTags        = 50
	maxTagKeyLen   = 128
	maxTagValueLen = 256
	maxArnLen      = 1283
)

// tag is one tag on the wire.
type tag struct {
	Key   *string
	Value *string
}

type tagResourceInput struct {
	ResourceArn *string
	Tags        []tag
}

type untagResourceInput struct {
	ResourceArn *string
	TagKeys     []string
}

type listTagsInput struct {
	ResourceArn *string
	NextToken   *string
}

// checkArn adds the constraint errors of a ResourceArn.
func (c *constraintErrors) checkArn(arn *string) {
	switch {
	case arn == nil:
		c.add("Value null at 'resourceArn' failed to satisfy constraint: Member must not be null")
	case len(*arn) < 1:
		c.add("Value '' at 'resourceArn' failed to satisfy constraint: Member must have length greater than or equal to 1")
	case len(*arn) > maxArnLen:
		c.add("Value '" + *arn + "' at 'resourceArn' failed to satisfy constraint: Member must have length less than or equal to 1283")
	}
}

// checkTags adds the constraint errors of a tag list (field "tags").
func (c *constraintErrors) checkTags(tags []tag) {
	for i, t := range tags {
		at := "tags." + strconv.Itoa(i+1) + ".member."
		switch {
		case t.Key == nil:
			c.add("Value null at '" + at + "key' failed to satisfy constraint: Member must not be null")
		case len(*t.Key) < 1:
			c.add("Value '' at '" + at + "key' failed to satisfy constraint: Member must have length greater than or equal to 1")
		case len([]rune(*t.Key)) > maxTagKeyLen:
			c.add("Value '" + *t.Key + "' at '" + at + "key' failed to satisfy constraint: Member must have length less than or equal to 128")
		}
		switch {
		case t.Value == nil:
			c.add("Value null at '" + at + "value' failed to satisfy constraint: Member must not be null")
		case len([]rune(*t.Value)) > maxTagValueLen:
			c.add("Value '" + *t.Value + "' at '" + at + "value' failed to satisfy constraint: Member must have length less than or equal to 256")
		}
	}
}

// tagChars reports whether s has only the characters DynamoDB allows in a
// tag: letters, digits, white space and _ . : / = + - @.
func tagChars(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsSpace(r) || strings.ContainsRune("_.:/=+-@", r) {
			continue
		}
		return false
	}
	return true
}

// validTags checks what the constraints leave to the service: the
// characters, the reserved aws: prefix.
func validTags(tags []tag) error {
	for _, t := range tags {
		if !tagChars(*t.Key) || !tagChars(*t.Value) {
			return apierr.Validation("One or more parameter values were invalid: tag key or value contains characters that are not allowed (letters, digits, white space and _ . : / = + - @): Key %q, Value %q", *t.Key, *t.Value)
		}
		if strings.HasPrefix(strings.ToLower(*t.Key), "aws:") {
			return apierr.Validation("One or more parameter values were invalid: the tag key prefix aws: is reserved for AWS use: %s", *t.Key)
		}
	}
	return nil
}

// tagged returns the tags after adding tags to have: a key given again
// takes the new value; more than 50 in all is refused.
func tagged(have map[string]string, tags []tag) (map[string]string, error) {
	out := make(map[string]string, len(have)+len(tags))
	for k, v := range have {
		out[k] = v
	}
	for _, t := range tags {
		out[*t.Key] = *t.Value
	}
	if len(out) > maxTags {
		return nil, apierr.Validation("One or more parameter values were invalid: The number of tags exceeds the limit of %d: the resource would have %d", maxTags, len(out))
	}
	return out, nil
}

// tableOfArn returns the table a ResourceArn names: a malformed ARN is a
// ValidationException, a well-formed one of no table of this server a
// ResourceNotFoundException.
func (s *Server) tableOfArn(arn string) (*table, error) {
	if !strings.HasPrefix(arn, "arn:") {
		return nil, apierr.Validation("Invalid TableArn: Invalid ResourceArn provided as input %s", arn)
	}
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[2] != "dynamodb" || !strings.HasPrefix(parts[5], "table/") {
		return nil, apierr.Validation("Invalid TableArn: Invalid ResourceArn provided as input %s", arn)
	}
	notFound := apierr.NotFound("Requested resource not found: ResourcArn: %s not found", arn)
	name := strings.TrimPrefix(parts[5], "table/")
	if strings.Contains(name, "/") || s.tableARN(name) != arn {
		return nil, notFound
	}
	s.catMu.RLock()
	t := s.tables[name]
	s.catMu.RUnlock()
	if t == nil {
		return nil, notFound
	}
	return t, nil
}

func tagResource(s *Server, ctx context.Context, body []byte) (any, error) {
	var in tagResourceInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	var c constraintErrors
	c.checkArn(in.ResourceArn)
	switch {
	case in.Tags == nil:
		c.add("Value null at 'tags' failed to satisfy constraint: Member must not be null")
	case len(in.Tags) == 0:
		c.add("Value '[]' at 'tags' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	c.checkTags(in.Tags)
	if err := c.err(); err != nil {
		return nil, err
	}
	if err := validTags(in.Tags); err != nil {
		return nil, err
	}
	t, err := s.tableOfArn(*in.ResourceArn)
	if err != nil {
		return nil, err
	}
	t.lockMeta()
	defer t.unlockMeta()
	if t.deleted {
		return nil, apierr.NotFound("Requested resource not found: ResourcArn: %s not found", *in.ResourceArn)
	}
	tags, err := tagged(t.meta.Tags, in.Tags)
	if err != nil {
		return nil, err
	}
	return struct{}{}, s.setTags(t, tags)
}

func untagResource(s *Server, ctx context.Context, body []byte) (any, error) {
	var in untagResourceInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	var c constraintErrors
	c.checkArn(in.ResourceArn)
	if in.TagKeys == nil {
		c.add("Value null at 'tagKeys' failed to satisfy constraint: Member must not be null")
	}
	for i, k := range in.TagKeys {
		if l := len([]rune(k)); l < 1 || l > maxTagKeyLen {
			bound := "greater than or equal to 1"
			if l > 0 {
				bound = "less than or equal to 128"
			}
			c.add("Value '" + k + "' at 'tagKeys." + strconv.Itoa(i+1) + ".member' failed to satisfy constraint: Member must have length " + bound)
		}
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	t, err := s.tableOfArn(*in.ResourceArn)
	if err != nil {
		return nil, err
	}
	t.lockMeta()
	defer t.unlockMeta()
	if t.deleted {
		return nil, apierr.NotFound("Requested resource not found: ResourcArn: %s not found", *in.ResourceArn)
	}
	tags := make(map[string]string, len(t.meta.Tags))
	for k, v := range t.meta.Tags {
		tags[k] = v
	}
	for _, k := range in.TagKeys { // a key the table does not have is no error
		delete(tags, k)
	}
	return struct{}{}, s.setTags(t, tags)
}

// setTags stores a table's tags (persisted with its metadata); the caller
// holds t.mu.
func (s *Server) setTags(t *table, tags map[string]string) error {
	old := t.meta.Tags
	t.meta.Tags = tags
	if len(tags) == 0 {
		t.meta.Tags = nil
	}
	if err := s.saveMeta(t); err != nil {
		t.meta.Tags = old
		return err
	}
	return nil
}

func listTagsOfResource(s *Server, ctx context.Context, body []byte) (any, error) {
	var in listTagsInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	var c constraintErrors
	c.checkArn(in.ResourceArn)
	if err := c.err(); err != nil {
		return nil, err
	}
	t, err := s.tableOfArn(*in.ResourceArn)
	if err != nil {
		return nil, err
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.deleted {
		return nil, apierr.NotFound("Requested resource not found: ResourcArn: %s not found", *in.ResourceArn)
	}
	return map[string]any{"Tags": tagList(t.meta.Tags)}, nil
}

// tagList is the wire form of tags, by key.
func tagList(tags map[string]string) []map[string]string {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]map[string]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, map[string]string{"Key": k, "Value": tags[k]})
	}
	return out
}

// createTags checks the Tags of a CreateTable request and returns them as
// the table's tags (nil when none).
func createTags(tags []tag) (map[string]string, error) {
	if tags == nil {
		return nil, nil
	}
	var c constraintErrors
	c.checkTags(tags)
	if err := c.err(); err != nil {
		return nil, err
	}
	if err := validTags(tags); err != nil {
		return nil, err
	}
	return tagged(nil, tags)
}
