package ddbclient

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/dynafold/dynafold/internal/ddbjson"
)

// wireError is the JSON 1.0 body of an error answer.
type wireError struct {
	Type        string       `json:"__type"`
	Code        string       `json:"code"`
	Message     string       `json:"message"`
	MessageCap  string       `json:"Message"`
	Cancelation []wireReason `json:"CancellationReasons"`
}

type wireReason struct {
	Code    *string
	Message *string
	Item    json.RawMessage
}

// responseError turns an error answer into the error the SDK returns for
// it: the SDK's type for the code (smithy.GenericAPIError for a code the
// SDK does not know) inside an *awshttp.ResponseError.
func responseError(svc service, resp *http.Response, body []byte) error {
	var we wireError
	_ = json.Unmarshal(body, &we) // a body that is not JSON leaves the header's code
	code := resp.Header.Get("X-Amzn-Errortype")
	if code == "" {
		code = we.Type
	}
	if code == "" {
		code = we.Code
	}
	code = sanitizeCode(code)
	msg := we.Message
	if msg == "" {
		msg = we.MessageCap
	}
	if code == "" {
		code = "UnknownError"
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
	}
	return &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: resp}, Err: apiError(svc, code, msg, we.Cancelation)},
		RequestID:     resp.Header.Get("X-Amzn-Requestid"),
	}
}

// sanitizeCode keeps the code of "ns#Code:detail", as the SDK does.
func sanitizeCode(code string) string {
	if i := strings.IndexByte(code, ':'); i >= 0 {
		code = code[:i]
	}
	if i := strings.LastIndexByte(code, '#'); i >= 0 {
		code = code[i+1:]
	}
	return code
}

// apiError is the SDK's error value for code.
func apiError(svc service, code, msg string, reasons []wireReason) error {
	entry, ok := svc.registry.Entries[svc.errNS+code]
	if !ok {
		return &smithy.GenericAPIError{Code: code, Message: msg}
	}
	v := entry.New()
	if tce, ok := v.(*types.TransactionCanceledException); ok {
		for _, r := range reasons {
			cr := types.CancellationReason{Code: r.Code, Message: r.Message}
			if len(r.Item) > 0 && !ddbjson.IsNull(r.Item) {
				if it, err := ddbjson.DecodeItem(r.Item); err == nil {
					cr.Item, _ = ToAttributeMap(it)
				}
			}
			tce.CancellationReasons = append(tce.CancellationReasons, cr)
		}
	}
	// Every DynamoDB (and Streams) error type carries its message in Message *string.
	if f := reflect.ValueOf(v).Elem().FieldByName("Message"); f.IsValid() && f.Type() == reflect.TypeFor[*string]() && msg != "" {
		f.Set(reflect.ValueOf(&msg))
	}
	if err, ok := v.(error); ok {
		return err
	}
	return &smithy.GenericAPIError{Code: code, Message: msg}
}
