package lease

import "strings"

// OfStream reports whether a lease whose Stream is theirs belongs to the
// stream ours, the stream a worker reads. A lease that names no stream
// (written before leases recorded it) is taken as ours. A DynamoDB stream
// disabled and enabled again gets a new ARN for the same table: the leases
// of the table's earlier stream are still ours (their shards' records may
// really be lost). A lease of another table's stream, or of another
// Kinesis stream, is not: two fleets share one lease table.
func OfStream(ours, theirs string) bool {
	if theirs == "" || ours == "" || theirs == ours {
		return true
	}
	a, aok := streamTable(ours)
	b, bok := streamTable(theirs)
	return aok && bok && a == b
}

// streamTable is the table part of a DynamoDB stream ARN
// (arn:aws:dynamodb:region:account:table/NAME/stream/LABEL); false for
// any other ARN (a Kinesis stream's).
func streamTable(arn string) (string, bool) {
	i := strings.LastIndex(arn, "/stream/")
	if i < 0 || !strings.Contains(arn[:i], ":table/") {
		return "", false
	}
	return arn[:i], true
}

// Split returns the leases of stream ours (see OfStream), and how many
// leases each other stream holds in the table.
func Split(all []Lease, ours string) ([]Lease, map[string]int) {
	own := all[:0:0]
	var foreign map[string]int
	for _, l := range all {
		if OfStream(ours, l.Stream) {
			own = append(own, l)
			continue
		}
		if foreign == nil {
			foreign = map[string]int{}
		}
		foreign[l.Stream]++
	}
	return own, foreign
}
