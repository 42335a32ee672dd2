package kfeed

import (
	"context"
	"encoding/base64"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// WireAPI is a Kinesis client whose GetRecords a Reader sends on the wire
// path (ddbclient.Wire): the answer read in one pass into the records'
// sequence numbers and data, without the SDK's middleware stack. Errors
// are the SDK's (the same types, codes and retries). Its other calls are
// the client's.
type WireAPI struct {
	*kinesis.Client
	wire *ddbclient.Wire
}

// WithWire returns c as a WireAPI, or c itself when its endpoint does not
// resolve to a fixed URL. c must run no middleware of its caller's but
// ddbclient.KeepConnectionsMiddleware (kinesisclient.NewClient's).
func WithWire(ctx context.Context, c *kinesis.Client) API {
	w, ok := ddbclient.NewKinesisWire(ctx, c)
	if !ok {
		return c
	}
	return &WireAPI{Client: c, wire: w}
}

// Wire returns the wire path's sender (its Attempt hook counts attempts).
func (a *WireAPI) Wire() *ddbclient.Wire { return a.wire }

// getRecords is GetRecords on the wire path, its answer in the SDK's
// output type with what the reader reads of it: records' sequence numbers
// and data, MillisBehindLatest, NextShardIterator, ChildShards.
func (a *WireAPI) getRecords(ctx context.Context, iter string, limit int32) (*kinesis.GetRecordsOutput, error) {
	buf := ddbclient.Buffer()
	buf.WriteString(`{"Limit":`)
	buf.WriteString(strconv.Itoa(int(limit)))
	buf.WriteString(`,"ShardIterator":`)
	ddbjson.AppendString(buf, iter)
	buf.WriteByte('}')
	var out *kinesis.GetRecordsOutput
	err := a.wire.CallBuffer(ctx, "GetRecords", buf, func(answer []byte) error {
		out = &kinesis.GetRecordsOutput{}
		return ddbjson.Answer(answer, func(k []byte, v *ddbjson.Node) (err error) {
			if v.IsNull() {
				return nil
			}
			switch string(k) {
			case "NextShardIterator":
				s, err := v.String()
				out.NextShardIterator = &s
				return err
			case "MillisBehindLatest":
				raw, err := v.Raw()
				if err != nil {
					return err
				}
				ms, err := strconv.ParseInt(string(raw), 10, 64)
				out.MillisBehindLatest = &ms
				return err
			case "Records":
				out.Records = []ktypes.Record{}
				return v.Array(func(v *ddbjson.Node) error {
					var r ktypes.Record
					err := v.Object(func(k []byte, v *ddbjson.Node) (err error) {
						if v.IsNull() {
							return nil
						}
						switch string(k) {
						case "SequenceNumber":
							s, err := v.String()
							r.SequenceNumber = &s
							return err
						case "PartitionKey":
							s, err := v.String()
							r.PartitionKey = &s
							return err
						case "Data":
							s, err := v.String()
							if err != nil {
								return err
							}
							r.Data, err = base64.StdEncoding.DecodeString(s)
							return err
						}
						return nil
					})
					out.Records = append(out.Records, r)
					return err
				})
			case "ChildShards":
				out.ChildShards = []ktypes.ChildShard{}
				return v.Array(func(v *ddbjson.Node) error {
					var c ktypes.ChildShard
					err := v.Object(func(k []byte, v *ddbjson.Node) (err error) {
						if v.IsNull() {
							return nil
						}
						switch string(k) {
						case "ShardId":
							s, err := v.String()
							c.ShardId = &s
							return err
						case "ParentShards":
							c.ParentShards = []string{}
							return v.Array(func(v *ddbjson.Node) error {
								s, err := v.String()
								c.ParentShards = append(c.ParentShards, s)
								return err
							})
						case "HashKeyRange":
							c.HashKeyRange = &ktypes.HashKeyRange{}
							return v.Object(func(k []byte, v *ddbjson.Node) (err error) {
								if v.IsNull() {
									return nil
								}
								switch string(k) {
								case "StartingHashKey":
									s, err := v.String()
									c.HashKeyRange.StartingHashKey = &s
									return err
								case "EndingHashKey":
									s, err := v.String()
									c.HashKeyRange.EndingHashKey = &s
									return err
								}
								return nil
							})
						}
						return nil
					})
					out.ChildShards = append(out.ChildShards, c)
					return err
				})
			}
			return nil
		})
	})
	return out, err
}
