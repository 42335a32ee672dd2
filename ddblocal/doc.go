// Package ddblocal is dynafold's DynamoDB-compatible server: the AWS JSON 1.0
// protocol of DynamoDB and DynamoDB Streams over HTTP, with tables, items,
// secondary indexes, transactions, streams and TTL kept in memory or in a
// bbolt file, and on the same port the Kinesis Data Streams API (JSON 1.1)
// with DynamoDB's Kinesis streaming destination. Every test of the project and the embedded default mode talk
// to it through the real aws-sdk-go-v2 client, so it follows DynamoDB's
// rules and messages (the API reference is the specification) and is never
// more lenient where that could hide a bug until production.
//
// # Layout
//
// server.go and http.go hold the server, the protocol and the error shape;
// front.go (with front_head.go and front_ctx.go) is ddblocal's own HTTP/1.1
// front for the requests the AWS SDKs send, handing any other connection,
// with the bytes it read, to net/http's server (ServeHTTP);
// auth.go the SigV4 header check; request.go runs a body through
// internal/reqshape (DynamoDB's types and constraints of each operation's
// parameters, before decoding); legacy.go the legacy parameters, which
// internal/expr translates into expressions; lifecycle.go the table
// status transitions; segment.go DynamoDB's scan hash and segments;
// pagesize.go the size a Query or Scan page counts;
// table.go, index.go and validate.go the in-memory store (items ordered by
// hash key then range key, maintained secondary indexes) and its checks;
// one file per operation family (item_ops.go, update_item.go, query.go,
// scan.go, batch.go, txn.go, txn_get.go, create_table.go, control.go,
// ttl.go, tags.go); streams.go splits and lists a stream's shards from Go (the
// stream log itself is internal/streams); commit.go applies a set of item changes atomically (items and
// their stream records in one bbolt transaction, then memory); persist.go
// is the bbolt layout; store.go opens the data file and refuses a damaged or
// locked one; utf8.go refuses strings that are not UTF-8; budget.go is the
// request memory (Options.RequestMemory) every request is charged before
// its body is read; shape.go counts a body's lists outside its attribute
// values before it is decoded (internal/wire decodes attribute values
// within DynamoDB's item limits); faults.go the fault injection;
// capacity.go the ConsumedCapacity arithmetic; kinesis.go serves the
// Kinesis API (the streams themselves are internal/kinesis) and
// kinesis_dest.go a table's Kinesis streaming destination.
//
// # Durability
//
// With Options.DataDir, an acknowledged write and its stream records are
// appended as one record (with the writes that arrived meanwhile: one write
// and one fdatasync) to the log DataDir/ddblocal.log before it is answered,
// and applied to the bbolt data file DataDir/ddblocal.db later, many
// appends in one bbolt transaction (a checkpoint: in the background past a
// size, before any other change of the data file, at Close, and at Start
// for what a crash left; internal/wal). A torn last record (a crash
// mid-append) is dropped at Start; a damaged one with records after it is
// ErrDataFileDamaged. The log file is preallocated with zeros and written
// over from its start after each checkpoint, never truncated (so an
// fdatasync commits no new file size); an earlier ddblocal ignores the log
// (after a clean Close, every record it holds is in the data file). A
// TransactWriteItems' ClientRequestToken is stored with its writes and
// remembered again at Start for its 10 minutes. After a crash at any instant, every
// acknowledged write is in its table and exactly once in its stream, in
// order per item (TestDurability_KillAtRandomPointsLosesNoStreamRecord);
// so is a change record of a table's Kinesis streaming destination
// (TestK3_KillAtRandomPointsLosesNoKinesisRecord).
//
// # Consistency
//
// Each table has a read-write lock. In memory, a write holds its tables'
// write locks while it reads its items, evaluates its conditions, applies
// the result and records the stream changes. With a data directory, a write
// instead holds its items' locks (a striped table keyed by table and key;
// a transaction takes all of its items' in a fixed order) from the read of
// its items to their in-memory apply: it evaluates its conditions under
// the tables' read locks, stores its changes with their stream records in
// a log append it shares with concurrent writes of other items (one
// fdatasync for all of them), then applies them under the write locks. A write
// stored but not yet applied is thus never read past by another write of
// its items; conditional writes are linearizable and an item's stream
// records are in write order either way. Changes of a table's metadata
// (UpdateTable, DeleteTable, TTL, tags, Kinesis destinations) wait for the
// writes in flight. A transaction checks every condition, then commits all
// its changes or none. Stored items are never mutated in place (updates
// build new items), so readers may use them after releasing the lock.
//
// # Answering like DynamoDB
//
// A request is checked in DynamoDB's stages and order: the HTTP front
// (method, content type, JSON, operation, SigV4 authentication, which
// Options.AllowUnsigned turns off), its members' JSON types
// (SerializationException in DynamoDB's words), the API model's
// constraints (com.amazon.coral.validate#ValidationException, every
// failure listed), the operation's own checks (attribute values, legacy
// parameters, expressions), then the table. Tables pass through CREATING,
// UPDATING and DELETING for Options.TableDelay (0: at once).
//
// # Known deviations from DynamoDB
//
//   - Eventually consistent reads and global index queries are current,
//     unless FaultConfig.StaleReads makes GetItem, BatchGetItem and Query
//     lag; Scan is never stale.
//   - Concurrent transactions on one item are serialized rather than
//     cancelled with TransactionConflict (inject it with FaultConfig).
//   - PartiQL, backups, global tables, exports and imports are not
//     implemented (UnknownOperationException).
//   - Tags (TagResource, UntagResource, ListTagsOfResource, CreateTable's
//     Tags) are on tables only, and take effect at once, where DynamoDB
//     applies them within seconds; ListTagsOfResource returns them all,
//     by key, without a NextToken.
//   - ItemCount and sizes in DescribeTable are exact, not six-hourly.
//   - Expired items are deleted at the next TTL sweep (Options.TTLInterval,
//     or SweepTTL), not within DynamoDB's "typically two days"; items whose
//     TTL is more than five years in the past are kept, as DynamoDB keeps
//     them. UpdateTimeToLive allows one change per table per hour, as the
//     API reference states (by Options.Now).
//   - ConsumedCapacity counts table units only; index writes are not added.
//   - Kinesis streams are ACTIVE at once, take no throughput limits but the
//     optional GetRecords call rate (KinesisOptions.ReadsPerShardPerSecond),
//     and have no enhanced fan-out; see docs/ddblocal.md.
//   - Items of an index with equal index keys come in table-key order, not
//     in the order of DynamoDB's hash of the table key.
//   - Signatures are not verified: any credentials are accepted.
//   - A stream's shards (StreamOptions.Shards open at once, routed by a hash
//     of the partition key) split by record count or on demand
//     (SplitShard), never by throughput, and never merge; sequence numbers
//     increase across shards too.
//
// docs/ddblocal.md lists what ddblocal supports and every known
// difference, with what could not be known from outside DynamoDB.
package ddblocal
