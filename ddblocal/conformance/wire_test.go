package conformance

import (
	"encoding/json"
	"strings"
	"testing"
)

// wireError decodes DynamoDB's JSON error body.
func wireError(t testing.TB, body []byte) (typ, msg string) {
	t.Helper()
	var e map[string]any
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body is not JSON: %q", body)
	}
	typ, _ = e["__type"].(string)
	msg, _ = e["message"].(string)
	if msg == "" {
		msg, _ = e["Message"].(string)
	}
	return typ, msg
}

func TestConformance_Wire_MalformedRequests(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	cases := []struct {
		name     string
		target   string
		body     string
		wantType string
	}{
		{"BadJSON", "DynamoDB_20120810.GetItem", `{"TableName": `, "SerializationException"},
		{"UnknownOperation", "DynamoDB_20120810.NoSuchOperation", `{}`, "UnknownOperationException"},
		{"UnknownService", "NoSuchService_20120810.ListTables", `{}`, "UnknownOperationException"},
		{"MissingTableName", "DynamoDB_20120810.GetItem", `{"Key": {"pk": {"S": "a"}}}`, "ValidationException"},
		{"UnknownTable", "DynamoDB_20120810.GetItem", `{"TableName": "` + tbl + `_missing", "Key": {"pk": {"S": "a"}}}`, "ResourceNotFoundException"},
		{"WrongFieldType", "DynamoDB_20120810.GetItem", `{"TableName": 5, "Key": {"pk": {"S": "a"}}}`, "SerializationException"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, hdr, body := rawRequestHeaders(t, map[string]string{
				"X-Amz-Target": tc.target, "Content-Type": "application/x-amz-json-1.0"}, []byte(tc.body))
			if status != 400 {
				t.Fatalf("status %d, want 400; body %s", status, body)
			}
			typ, _ := wireError(t, body)
			if !strings.HasSuffix(typ, "#"+tc.wantType) && typ != tc.wantType {
				t.Fatalf("__type %q, want ...#%s; body %s", typ, tc.wantType, body)
			}
			if hdr.Get("X-Amzn-Requestid") == "" {
				t.Fatalf("no x-amzn-RequestId header")
			}
			if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-amz-json-1.0") {
				t.Fatalf("Content-Type %q, want application/x-amz-json-1.0", ct)
			}
		})
	}
}

func TestConformance_Wire_ErrorMessages(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	_, body := rawCall(t, "DynamoDB_20120810.PutItem", []byte(`{"TableName": "`+tbl+`", "Item": {"pk": {"N": "1"}}}`))
	typ, msg := wireError(t, body)
	if !strings.HasSuffix(typ, "ValidationException") || msg == "" {
		t.Fatalf("ValidationException body %s: want __type ...ValidationException and a message", body)
	}
	_, body = rawCall(t, "DynamoDB_20120810.PutItem", []byte(`{"TableName": "`+tbl+`", "Item": {"pk": {"S": "a"}}, "ConditionExpression": "attribute_exists(pk)"}`))
	typ, msg = wireError(t, body)
	if typ != "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException" || msg == "" {
		t.Fatalf("ConditionalCheckFailedException body %s: want __type com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException and a message", body)
	}
}
