// Package kinesisconf holds the Kinesis conformance suite: tests that drive
// a Kinesis-compatible server through aws-sdk-go-v2 over HTTP and assert
// what the Kinesis API reference documents. The same tests run against
// ddblocal (in-process, the default) and against any endpoint named by
// KINESIS_CONFORMANCE_ENDPOINT, such as kinesalite 3.3.3 (see
// ../kinesalite.sh), so ddblocal's Kinesis API is checked against an
// implementation written elsewhere, as ../ checks its DynamoDB API against
// dynalite.
//
// Running:
//
//	go test ./ddblocal/conformance/kinesisconf/ -run Conformance   # in-process ddblocal
//	bash ddblocal/conformance/kinesalite.sh run                    # against kinesalite
//
// Environment:
//
//	KINESIS_CONFORMANCE_ENDPOINT  http://host:port of the server to test; unset: start ddblocal in-process
//	KINESIS_CONFORMANCE_TARGET    name of that server ("kinesalite" marks its known gaps)
//
// Skips: where kinesalite 3.3.3 is known to differ from the Kinesis API
// reference, skipOnKinesalite skips that check on kinesalite only, naming
// the difference: it does not fill ChildShards when a closed shard is
// drained (a reader finds the children by listing, which every target is
// checked for), it ignores ListShards' ShardFilter, it refuses requests
// that name a stream only by StreamARN, and it answers GetRecords with
// Limit 0. Tests that need ddblocal's
// own hooks (a clock, options) run only in-process.
package kinesisconf
