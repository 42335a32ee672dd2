// Command lambda is dynafold as an AWS Lambda function: it folds
// the change feed of an event table into read-model rows with the
// configured plugins and answers every batch with the partial batch
// response. Build it for the provided.al2023 runtime as bootstrap:
//
//	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -o bootstrap ./cmd/lambda
//
// and ship bootstrap, dynafold.json and the plugins (.wasm) in the
// function's package, with a compilation cache filled by
// `host plugin precompile --config dynafold.json` (a host binary built for
// the same GOARCH) and "plugins": {"cacheDir": "cache", "cacheReadOnly":
// true}: the package is read-only, and without a precompiled cache every
// cold start compiles the plugins (about a second for a Go plugin). The
// function verifies the cache's compiled code against the manifests
// precompile wrote, authenticated with the cache key: the key file
// precompile leaves in the cache (dynafold-cache.key; precompile makes
// the cache's files readable by every user, as the function's user is not
// the one that built the zip), or
// DYNAFOLD_CACHE_KEY in the function's environment, with the same value
// precompile ran with. Code that does not verify is refused (logged) and
// compiled in memory. The host is built once, at cold start, and reused by
// every invocation; an error building it fails the init (logged), and
// Lambda retries it on the next invocation.
//
// # Environment
//
//   - DYNAFOLD_CONFIG: the configuration file (host.Config JSON).
//     Default: dynafold.json in LAMBDA_TASK_ROOT (where Lambda unpacks the
//     package), else beside the binary.
//   - DYNAFOLD_SOURCE: "lambda" (an event source mapping invokes the
//     function; failed records are named by dynamodb.SequenceNumber, or
//     kinesis.sequenceNumber for Kinesis records) or "pipe" (the function is
//     an EventBridge Pipe's target; named by eventID). Overrides the
//     configuration's "source"; default "lambda".
//   - DYNAFOLD_PLUGIN_DIR: the directory of relative plugin paths (default:
//     the configuration file's directory).
//   - DYNAFOLD_CACHE_KEY: the key of the precompiled cache (64 hex
//     digits), when it does not ship as a file in the cache.
//   - AWS_ENDPOINT_URL_DYNAMODB: the DynamoDB endpoint, overriding the
//     configuration's "endpoint" (a loopback endpoint, such as ddblocal's,
//     gets dummy credentials).
//   - AWS_REGION: set by Lambda; overrides the configuration's "region".
//   - DYNAFOLD_METRICS: "off" stops the per-invocation metrics, written to
//     stdout in CloudWatch embedded metric format (namespace "dynafold",
//     dimension Source: Records, Events, DecodeFailures, Applied,
//     AlreadyApplied, RowsWritten, RowsFailed, Conflicts, BatchItemFailures,
//     Duration, IteratorAge, Retries, GapReads, FailedRecords; with hot
//     swap, PluginSwaps and PluginSwapFailures; the plugin serving each
//     projection in the property PluginVersions).
//   - AWS_LAMBDA_FUNCTION_MEMORY_SIZE: set by Lambda. Unless GOGC or
//     GOMEMLIMIT is set, the garbage collector runs at GOGC=400 with a soft
//     memory limit at three quarters of the function's memory (the "ready"
//     log line says so); GOGC=100 restores Go's default.
//   - DYNAFOLD_HTTP_CLIENT: "net/http" sends DynamoDB requests through
//     net/http's client, as the AWS SDK does, instead of on the host's own
//     kept connections (the default, which costs less CPU per request).
//   - AWS_LAMBDA_LOG_LEVEL: DEBUG, INFO (default), WARN or ERROR. Logs are
//     JSON lines (log/slog) on stderr, one summary per invocation plus one
//     line per failed record or row.
//
// # Event source mapping
//
// For a DynamoDB event source mapping (DYNAFOLD_SOURCE=lambda):
//
//   - FunctionResponseTypes: ["ReportBatchItemFailures"] — required. The
//     function reports the earliest record of every failed row and every
//     record that failed to decode; Lambda checkpoints below the lowest one
//     and retries from it, and the rows' checkpoints skip what was applied.
//     Without it the response is ignored: the batch counts as done, and a
//     failed row stays behind until a later event of it gap-fills the missed
//     ones.
//   - StartingPosition: TRIM_HORIZON for a new read model, so it sees the
//     events already in the stream (older ones come from the event store
//     through gap-filling and rebuild).
//   - BisectBatchOnFunctionError: true, so a batch whose invocation fails
//     (an error, a timeout, StreamRecordIdentifierMissing) is split to
//     isolate the record that causes it.
//   - MaximumRetryAttempts and MaximumRecordAgeInSeconds bounded, with an
//     OnFailure destination (SQS or SNS), so a poison record holds its shard
//     for a bounded time and is dead-lettered, not dropped silently.
//   - ParallelizationFactor: any (1–10); rows are guarded by conditional
//     writes, so lanes racing on a row are safe.
//   - FilterCriteria: keep only the INSERTs of the configured streams' events,
//     so snapshots and other items never invoke the function.
//   - StreamViewType of the event table: NEW_IMAGE or NEW_AND_OLD_IMAGES.
//
// # Kinesis Data Streams for DynamoDB
//
// The event source mapping may read a Kinesis data stream the event table
// streams its changes to (the table's KinesisStreamSpecification) instead
// of its DynamoDB stream; DYNAFOLD_SOURCE stays "lambda" ("pipe" for a Pipe
// from the Kinesis stream). The function tells the kinds apart by each
// batch's eventSource (aws:kinesis), decodes each record's base64 data as
// the DynamoDB change record and names a failed one by its
// kinesis.sequenceNumber. Kinesis delivers a change more than once and out
// of order; the host takes each stream's order from the event store, so
// the rows are the same. Set the same failure settings, with:
//
//   - FilterCriteria: the output of `host filter-pattern --kinesis`, whose
//     pattern matches inside the record's data (a Kinesis mapping filters
//     on data alone).
//   - StartingPosition: TRIM_HORIZON, as for a stream (the Kinesis stream
//     keeps records for its retention period, 24 hours to a year).
//   - ApproximateCreationDateTimePrecision of the table: MILLISECOND or
//     MICROSECOND; the function reads either (by magnitude: an epoch time
//     from 10^14 on is microseconds, below it milliseconds).
//
// docs/deploy/template-kinesis.json is the SAM template of this variant.
//
// The function stops folding 500 ms before its timeout
// (handler.DefaultDeadlineMargin) and reports the rows still running, so a
// slow batch is answered in part instead of timing out whole. Each row it
// stopped is logged as failed because the function's time ran out, its
// records going back to the source, with the call it stopped in (often a
// DynamoDB request's "context deadline exceeded"): raise the function's
// timeout or lower BatchSize when that keeps happening.
//
// # Hot swap
//
// A projection with "hotSwap" in the configuration has its
// source checked between invocations, never during one: each invocation
// checks first, before it reads its batch, and a new module that passes
// validation and the smoke test serves that whole invocation and the ones
// after it. A watched file ({"watch": true}: a directory the function can
// see change, such as an EFS mount) is checked at every invocation, one
// stat while unchanged; an S3 object at most once per its "interval"
// (default 30s), one conditional GetObject. While an invocation is in
// flight nothing swaps: with several invocations at once
// (AWS_LAMBDA_MAX_CONCURRENCY), the check waits for an invocation that
// starts with none in flight. A module refused, or a source that fails, is
// logged and counted (PluginSwapFailures) and the version before keeps
// serving; the invocation goes on. Lambda freezes the environment between
// invocations, so nothing watches in the background.
//
// For an EventBridge Pipe (DYNAFOLD_SOURCE=pipe) the function must be the
// pipe's target, not its enrichment: a Pipe honours partial batch responses
// from its target only. Set the source parameters the same way
// (OnPartialBatchItemFailure AUTOMATIC_BISECT, MaximumRetryAttempts,
// MaximumRecordAgeInSeconds, DeadLetterConfig).
package main
