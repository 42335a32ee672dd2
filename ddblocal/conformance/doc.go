// Package conformance holds the DynamoDB conformance suite: tests that drive a
// DynamoDB-compatible server through aws-sdk-go-v2 over HTTP and assert what
// the AWS API reference and Developer Guide document. The same tests run
// against ddblocal (in-process, the default) and against any endpoint named by
// DDB_CONFORMANCE_ENDPOINT, such as dynalite 4.0.0 (see dynalite.sh), so
// ddblocal's fidelity is checked against an implementation written elsewhere.
//
// Running:
//
//	go test ./ddblocal/conformance/ -run Conformance        # in-process ddblocal
//	bash ddblocal/conformance/dynalite.sh run               # against dynalite
//	bash ddblocal/conformance/dynalite.sh bench -count=3    # BenchmarkDDB on both
//
// Environment:
//
//	DDB_CONFORMANCE_ENDPOINT  http://host:port of the server to test; unset: start ddblocal in-process
//	DDB_CONFORMANCE_TARGET    name of that server ("dynalite" marks its known gaps)
//	DDB_DYNALITE_ENDPOINT     dynalite for BenchmarkDDB when the suite targets ddblocal
//
// Skips: a test skips, naming the operations, when the target lacks them
// (dynalite 4.0.0 has no TransactWriteItems, TransactGetItems,
// UpdateTimeToLive or Streams API; any target answering
// UnknownOperationException to a probe is treated the same way). Tests that
// need ddblocal's own hooks (SweepTTL, shard/retention/clock options, fault
// injection) skip unless ddblocal runs in-process. Where dynalite contradicts
// the AWS documentation, skipOnDynalite skips that check on dynalite only,
// with a comment citing the documentation beside the call.
package conformance
