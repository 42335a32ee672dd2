package conformance

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// These tests check what DynamoDB answers before an operation runs: the
// HTTP front, authentication, serialization and validation errors, with
// their namespaces, message keys and words (dynalite's tests, written
// against DynamoDB, and the AWS API reference).

// unsignedRequest sends a request as given: no SigV4 signature, and only
// the headers named.
func unsignedRequest(t testing.TB, method string, headers map[string]string, body []byte) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(t), method, tgt.endpoint+"/", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, tgt.endpoint, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp.StatusCode, resp.Header, out
}

// errorBody decodes an error body into its members.
func errorBody(t testing.TB, body []byte) map[string]any {
	t.Helper()
	var e map[string]any
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body is not JSON: %q", body)
	}
	return e
}

// requireErrorBody checks an answer's status and exact error body.
func requireErrorBody(t testing.TB, status int, body []byte, want map[string]any, what string) {
	t.Helper()
	if status != 400 {
		t.Fatalf("%s: status %d, want 400; body %s", what, status, body)
	}
	got := errorBody(t, body)
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
}

var requestIDShape = regexp.MustCompile(`^[0-9A-Z]{52}$`)

// TestConformance_Protocol_RequestIDs: every answer carries a request id
// of DynamoDB's shape, 52 characters of [0-9A-Z].
func TestConformance_Protocol_RequestIDs(t *testing.T) {
	t.Parallel()
	_, hdr, _ := rawRequestHeaders(t, map[string]string{"X-Amz-Target": "DynamoDB_20120810.ListTables",
		"Content-Type": "application/x-amz-json-1.0"}, []byte(`{}`))
	if id := hdr.Get("X-Amzn-Requestid"); !requestIDShape.MatchString(id) {
		t.Fatalf("x-amzn-RequestId %q, want 52 characters of [0-9A-Z]", id)
	}
	_, hdr, _ = unsignedRequest(t, http.MethodPost, map[string]string{"X-Amz-Target": "DynamoDB_20120810.ListTables"}, nil)
	if id := hdr.Get("X-Amzn-Requestid"); !requestIDShape.MatchString(id) {
		t.Fatalf("x-amzn-RequestId of an error %q, want 52 characters of [0-9A-Z]", id)
	}
}

// TestConformance_Protocol_Authentication: a request without an AWS
// Signature Version 4 Authorization header is refused with
// MissingAuthenticationTokenException, one missing its parts with
// IncompleteSignatureException; any signed request is served.
func TestConformance_Protocol_Authentication(t *testing.T) {
	t.Parallel()
	status, _, body := unsignedRequest(t, http.MethodPost, map[string]string{
		"X-Amz-Target": "DynamoDB_20120810.ListTables", "Content-Type": "application/x-amz-json-1.0"}, []byte(`{}`))
	requireErrorBody(t, status, body, map[string]any{"__type": "com.amazon.coral.service#MissingAuthenticationTokenException",
		"message": "Request is missing Authentication Token"}, "no Authorization header")
	status, _, body = unsignedRequest(t, http.MethodPost, map[string]string{"X-Amz-Target": "DynamoDB_20120810.ListTables",
		"Content-Type": "application/x-amz-json-1.0", "Authorization": "Basic Zm9vOmJhcg=="}, []byte(`{}`))
	requireErrorBody(t, status, body, map[string]any{"__type": "com.amazon.coral.service#MissingAuthenticationTokenException",
		"message": "Request is missing Authentication Token"}, "an Authorization header of another scheme")
	status, _, body = unsignedRequest(t, http.MethodPost, map[string]string{"X-Amz-Target": "DynamoDB_20120810.ListTables",
		"Content-Type": "application/x-amz-json-1.0", "Authorization": "AWS4- Signature=b Credential=a", "Date": "a"}, []byte(`{}`))
	requireErrorBody(t, status, body, map[string]any{"__type": "com.amazon.coral.service#IncompleteSignatureException",
		"message": "Authorization header requires 'SignedHeaders' parameter. Authorization=AWS4- Signature=b Credential=a"}, "a signature without SignedHeaders")
	status, body = rawCall(t, "DynamoDB_20120810.ListTables", []byte(`{}`))
	if status != 200 {
		t.Fatalf("signed ListTables: status %d, body %s", status, body)
	}
}

// TestConformance_Protocol_FrontErrors: what DynamoDB answers to what is
// not a request of it, in its order: another method than POST or a body
// of another content type is 404, a body that is not JSON a
// SerializationException without a message, an unknown operation an
// UnknownOperationException without a message; a GET is a health check.
func TestConformance_Protocol_FrontErrors(t *testing.T) {
	t.Parallel()
	status, _, body := unsignedRequest(t, http.MethodPost, nil, []byte("hi"))
	if status != 404 || string(body) != "<UnknownOperationException/>\n" {
		t.Fatalf("a body without a content type: %d %q, want 404 <UnknownOperationException/>", status, body)
	}
	status, _, _ = unsignedRequest(t, http.MethodPut, nil, nil)
	if status != 404 {
		t.Fatalf("PUT: status %d, want 404", status)
	}
	status, _, body = unsignedRequest(t, http.MethodGet, nil, nil)
	if status != 200 || !strings.HasPrefix(string(body), "healthy: dynamodb.") {
		t.Fatalf("GET: %d %q, want 200 healthy: dynamodb.<region>.amazonaws.com", status, body)
	}
	status, hdr, body := unsignedRequest(t, http.MethodPost, map[string]string{"Content-Type": "application/x-amz-json-1.0"}, []byte("hi"))
	requireErrorBody(t, status, body, map[string]any{"__type": "com.amazon.coral.service#SerializationException"}, "a body that is not JSON")
	if ct := hdr.Get("Content-Type"); ct != "application/x-amz-json-1.0" {
		t.Fatalf("Content-Type of the answer %q, want the request's application/x-amz-json-1.0", ct)
	}
	status, hdr, body = unsignedRequest(t, http.MethodPost, map[string]string{"Content-Type": "application/json",
		"X-Amz-Target": "DynamoDB_20120810.ListTable"}, []byte("{}"))
	requireErrorBody(t, status, body, map[string]any{"__type": "com.amazon.coral.service#UnknownOperationException"}, "an unknown operation")
	if ct := hdr.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type of the answer %q, want the request's application/json", ct)
	}
}

// TestConformance_Protocol_SerializationMessages: a member of the wrong
// JSON type is a SerializationException in DynamoDB's words, under
// "Message", before any validation.
func TestConformance_Protocol_SerializationMessages(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, target, body, msg string }{
		{"BooleanForString", "GetItem", `{"TableName": true}`, "TRUE_VALUE cannot be converted to String"},
		{"NumberForString", "GetItem", `{"TableName": 12}`, "NUMBER_VALUE cannot be converted to String"},
		{"DecimalForString", "GetItem", `{"TableName": 1.5}`, "DECIMAL_VALUE cannot be converted to String"},
		{"ObjectForString", "GetItem", `{"TableName": {}}`, "Start of structure or map found where not expected"},
		{"ListForString", "GetItem", `{"TableName": []}`, "Unrecognized collection type class java.lang.String"},
		{"StringForInteger", "Scan", `{"TableName": "abc", "Limit": "1"}`, "STRING_VALUE cannot be converted to Integer"},
		{"NumberForBoolean", "GetItem", `{"TableName": "abc", "ConsistentRead": 1}`, "NUMBER_VALUE cannot be converted to Boolean"},
		{"WordForBoolean", "GetItem", `{"TableName": "abc", "ConsistentRead": "maybe"}`, "Unexpected token received from parser"},
		{"ScalarForMap", "GetItem", `{"TableName": "abc", "Key": 1}`, "Unexpected field type"},
		{"ScalarForValue", "GetItem", `{"TableName": "abc", "Key": {"a": "x"}}`, "Unexpected value type in payload"},
		{"BooleanInValue", "GetItem", `{"TableName": "abc", "Key": {"a": {"S": true}}}`, "TRUE_VALUE cannot be converted to String"},
		{"BadBase64", "GetItem", `{"TableName": "abc", "Key": {"a": {"B": "abc"}}}`, "Base64 encoded length is expected a multiple of 4 bytes but found: 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := rawCall(t, "DynamoDB_20120810."+tc.target, []byte(tc.body))
			requireErrorBody(t, status, body, map[string]any{"__type": "com.amazon.coral.service#SerializationException", "Message": tc.msg}, tc.body)
		})
	}
}

// TestConformance_Protocol_ValidationErrors: validation errors come from
// com.amazon.coral.validate, under "message", the API model's constraints
// listed together ("N validation errors detected"); a value DynamoDB
// converts ("no" for NULL) is then checked as what it converts to.
func TestConformance_Protocol_ValidationErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, target, body, msg string }{
		{"Constraints", "GetItem", `{"TableName": "a;", "ReturnConsumedCapacity": "hi"}`,
			"4 validation errors detected: Value 'hi' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]; " +
				"Value 'a;' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; " +
				"Value 'a;' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 3; " +
				"Value null at 'key' failed to satisfy constraint: Member must not be null"},
		{"NullNo", "GetItem", `{"TableName": "abc", "Key": {"a": {"NULL": "no"}}}`,
			"One or more parameter values were invalid: Null attribute value types must have the value of true"},
		{"NumberBeforeTypes", "GetItem", `{"TableName": "abc", "Key": {"a": {"S": "a", "N": "b"}}}`,
			"The parameter cannot be converted to a numeric value: b"},
		{"RequiredTableName", "DescribeTable", `{}`, "The parameter 'TableName' is required but was not present in the request"},
		{"EmptyExclusiveStartTableName", "ListTables", `{"ExclusiveStartTableName": ""}`,
			"2 validation errors detected: Value '' at 'exclusiveStartTableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; " +
				"Value '' at 'exclusiveStartTableName' failed to satisfy constraint: Member must have length greater than or equal to 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := rawCall(t, "DynamoDB_20120810."+tc.target, []byte(tc.body))
			requireErrorBody(t, status, body, map[string]any{"__type": "com.amazon.coral.validate#ValidationException", "message": tc.msg}, tc.body)
		})
	}
}

// TestConformance_Protocol_ValidationBeforeNotFound: a request's own
// errors are found before its table is looked up, in batches too.
func TestConformance_Protocol_ValidationBeforeNotFound(t *testing.T) {
	t.Parallel()
	missing := tableName(t)
	cases := []struct{ name, target, body, msg string }{
		{"BatchWriteEmptyValue", "BatchWriteItem", `{"RequestItems": {"` + missing + `": [{"PutRequest": {"Item": {"a": {}}}}]}}`,
			"Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"},
		{"BatchGetDuplicateKeys", "BatchGetItem", `{"RequestItems": {"` + missing + `": {"Keys": [{"a": {"S": "x"}}, {"a": {"S": "x"}}]}}}`,
			"Provided list of item keys contains duplicates"},
		{"PutItemEmptyValue", "PutItem", `{"TableName": "` + missing + `", "Item": {"a": {}}}`,
			"Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"},
		{"QueryWithoutKeyCondition", "Query", `{"TableName": "` + missing + `"}`,
			"Either the KeyConditions or KeyConditionExpression parameter must be specified in the request."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := rawCall(t, "DynamoDB_20120810."+tc.target, []byte(tc.body))
			requireErrorBody(t, status, body, map[string]any{"__type": "com.amazon.coral.validate#ValidationException", "message": tc.msg}, tc.name)
		})
	}
}
