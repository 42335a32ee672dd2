// Package conformance holds the DynamoDB conformance suite: tests that drive a
// DynamoDB-compatible server through aws-sdk-go-v2 over HTTP and assert what
// the AWS API reference documents. The same tests run against ddblocal
// (in-process, the default) and against any endpoint named by
// DDB_CONFORMANCE_ENDPOINT, such as dynalite (see dynalite.sh), so ddblocal's
// fidelity is checked against an implementation written elsewhere.
//
// Environment:
//
//	DDB_CONFORMANCE_ENDPOINT  http://host:port of the server to test; unset: start ddblocal in-process
//	DDB_CONFORMANCE_TARGET    name of that server ("dynalite" marks its known gaps)
//
// Operations the target does not implement (known gaps, or an
// UnknownOperationException from a probe) make the tests that need them skip,
// naming the operation.
package conformance
