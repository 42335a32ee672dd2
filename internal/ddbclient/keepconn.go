package ddbclient

import (
	"context"
	"io"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// KeepConnections is an SDK option that keeps a connection open after a
// request whose answer arrives while net/http is still finishing the
// request's body.
//
// Why: the SDK hands net/http a body that implements io.WriterTo and,
// once closed, answers WriteTo with io.EOF. net/http writes the declared
// length, then copies whatever is left into io.Discard; when the server
// answered in between (it had the whole body), the SDK has already
// closed the body, that copy fails with io.EOF, and net/http closes the
// connection. The request succeeded, but the next one needs a new
// connection: to DynamoDB a TCP and a TLS handshake, round trips that
// measured 1 request in 5 to 10. Handing net/http the same stream
// without WriteTo makes a closed body read as an ordinary end (Read
// answers io.EOF), and the connection stays in the pool.
// NewClient's clients have it; other clients built with the SDK can add
// it.
func KeepConnections(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, KeepConnectionsMiddleware)
}

// KeepConnectionsMiddleware is KeepConnections for the clients of other
// services (their Options.APIOptions): it goes last in the finalize step,
// after the content length, the signature and each retry's rewind, so it
// runs on every attempt.
func KeepConnectionsMiddleware(st *middleware.Stack) error {
	return st.Finalize.Add(middleware.FinalizeMiddlewareFunc("dynafoldKeepConnections",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			if req, ok := in.Request.(*smithyhttp.Request); ok {
				if rs, ok := req.GetStream().(io.ReadSeeker); ok {
					if _, isWT := rs.(io.WriterTo); isWT {
						r, err := req.SetStream(readSeeker{rs})
						if err != nil {
							return middleware.FinalizeOutput{}, middleware.Metadata{}, err
						}
						in.Request = r
					}
				}
			}
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
}

// readSeeker is a stream with Read and Seek only: no WriteTo.
type readSeeker struct{ io.ReadSeeker }
