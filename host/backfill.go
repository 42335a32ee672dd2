package host

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

// ProjectionStream returns the stream of a projection's first source: the
// stream whose instances Rebuild re-derives.
func (h *Host) ProjectionStream(projection string) (string, error) {
	e, err := h.engine(projection)
	if err != nil {
		return "", err
	}
	return e.Projection().Sources[0].Stream, nil
}

// ScanStreamIDs scans the event table for the instances of stream, with
// segments parallel Scan segments (at least 1), and calls f once per
// instance id, from the segments' goroutines one at a time. A non-zero
// since keeps only the instances with an event stored at or after it (the
// events' timestamp). It returns the first error of a segment. Items
// marked as the stream's events whose key is not the one the layout
// derives from their streamId and version (or whose streamId or version
// does not read) name no instance: once every segment is done, they are
// returned as an *EventItemsError, the instances of the others having been
// passed to f.
func (h *Host) ScanStreamIDs(ctx context.Context, stream string, segments int, since time.Time, f func(id string)) error {
	st, err := h.stream(stream)
	if err != nil {
		return err
	}
	l := h.es.Layout()
	items := &eventItems{layout: l, stream: st}
	segments = max(segments, 1)
	filter := "#m = :m"
	names := map[string]string{"#m": eventstore.AttrMarker, "#id": eventstore.AttrStreamID, "#v": eventstore.AttrVersion,
		"#pk": l.PKName(), "#sk": l.SKName()}
	vals := map[string]types.AttributeValue{":m": &types.AttributeValueMemberS{Value: h.es.Layout().Marker(stream)}}
	if !since.IsZero() {
		filter += " AND #ts >= :ts"
		names["#ts"] = eventstore.AttrTimestamp
		vals[":ts"] = &types.AttributeValueMemberS{Value: since.UTC().Format(eventstore.TimestampFormat)}
	}
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
		wg   sync.WaitGroup
		errs = make([]error, segments)
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for seg := range segments {
		wg.Go(func() {
			in := &dynamodb.ScanInput{TableName: aws.String(h.es.Table()), FilterExpression: aws.String(filter),
				ProjectionExpression: aws.String("#id, #v, #pk, #sk"), ExpressionAttributeNames: names, ExpressionAttributeValues: vals,
				Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(int32(segments))}
			for {
				out, err := h.db.Client().Scan(ctx, in)
				if err != nil {
					errs[seg] = fmt.Errorf("scanning %s (segment %d of %d) for %s streams: %w", h.es.Table(), seg, segments, stream, err)
					cancel()
					return
				}
				for _, raw := range out.Items {
					it, err := ddbclient.FromAttributeMap(raw)
					if err != nil || !items.check(it) {
						continue
					}
					id := it[eventstore.AttrStreamID].Str
					mu.Lock()
					if !seen[id] {
						seen[id] = true
						f(id)
					}
					mu.Unlock()
				}
				if len(out.LastEvaluatedKey) == 0 {
					return
				}
				in.ExclusiveStartKey = out.LastEvaluatedKey
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return items.err()
}
