package netenv

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Chain returns the length of the longest chain of requests each sent
// after the previous one was answered (reqs in order of arrival): the
// round trips a batch waited for one after the other. On a busy machine a
// request can start late for want of CPU and lengthen a chain; it never
// shortens one.
func Chain(reqs []Request) int {
	depth := make([]int, len(reqs))
	longest := 0
	for j := range reqs {
		depth[j] = 1
		for i := range j {
			if reqs[i].End < reqs[j].Start && depth[i]+1 > depth[j] {
				depth[j] = depth[i] + 1
			}
		}
		longest = max(longest, depth[j])
	}
	return longest
}

// RowChain returns the length of the longest chain of one row's requests,
// each sent after the previous one's answer: the round trips the batch's
// dependencies took (read, gap read, write, retry, delivery, delete),
// whatever the CPU did to the order of independent rows. A request belongs
// to the rows whose pk it names; a request without a key of its own there
// (an event-table Query: a gap read) to the rows whose pk ends in the same
// "#" part as its pk (a row keyed by its stream id).
func RowChain(reqs []Request) int {
	rows := map[string]bool{}
	for _, r := range reqs {
		if r.Op == "PutItem" || r.Op == "TransactWriteItems" || r.Op == "BatchGetItem" || r.Op == "GetItem" {
			for _, k := range r.Keys {
				rows[k] = true
			}
		}
	}
	suffix := func(k string) string { return k[strings.LastIndexByte(k, '#')+1:] }
	longest := 0
	for pk := range rows {
		var mine []Request
		for _, r := range reqs {
			if Touches(r.Keys, pk) {
				mine = append(mine, r)
				continue
			}
			for _, k := range r.Keys {
				if r.Op == "Query" && !rows[k] && suffix(k) == suffix(pk) {
					mine = append(mine, r)
					break
				}
			}
		}
		longest = max(longest, Chain(mine))
	}
	return longest
}

// Delivered returns the deliveries the webhook accepted, in order of
// arrival, as "<row pk> v<version>.<index>".
func Delivered(reqs []Request) []string {
	var out []string
	for _, r := range reqs {
		if r.Op != "Deliver" || r.Err {
			continue
		}
		var e struct {
			Version, Index int
		}
		_ = json.Unmarshal(r.body, &e)
		out = append(out, fmt.Sprintf("%s v%d.%d", strings.Join(r.Keys, ","), e.Version, e.Index))
	}
	return out
}

// requestKeys returns the first table a DynamoDB request names and the pk
// values of the items it reads or writes (of a Query, the hash key value
// :h or :pk); for a webhook delivery, the pk of the effect's row.
func requestKeys(op string, body []byte) (string, []string) {
	type item map[string]map[string]any
	pk := func(it item) string {
		s, _ := it["pk"]["S"].(string)
		return s
	}
	switch op {
	case "Deliver":
		var e struct {
			Key map[string]any `json:"key"`
		}
		_ = json.Unmarshal(body, &e)
		if s, ok := e.Key["pk"].(string); ok {
			return "", []string{s}
		}
		return "", nil
	case "BatchGetItem":
		var in struct {
			RequestItems map[string]struct{ Keys []item }
		}
		_ = json.Unmarshal(body, &in)
		for t, ks := range in.RequestItems {
			var out []string
			for _, k := range ks.Keys {
				out = append(out, pk(k))
			}
			return t, out
		}
		return "", nil
	case "TransactWriteItems":
		var in struct {
			TransactItems []struct {
				Put *struct {
					TableName string
					Item      item
				}
			}
		}
		_ = json.Unmarshal(body, &in)
		table, seen, out := "", map[string]bool{}, []string(nil)
		for _, ti := range in.TransactItems {
			if ti.Put == nil {
				continue
			}
			if table == "" {
				table = ti.Put.TableName
			}
			if k := pk(ti.Put.Item); !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
		return table, out
	}
	var in struct {
		TableName                 string
		Item, Key                 item
		ExpressionAttributeValues item
	}
	_ = json.Unmarshal(body, &in)
	switch {
	case in.Item != nil:
		return in.TableName, []string{pk(in.Item)}
	case in.Key != nil:
		return in.TableName, []string{pk(in.Key)}
	case op == "Query":
		for _, name := range []string{":h", ":pk"} {
			if s, ok := in.ExpressionAttributeValues[name]["S"].(string); ok {
				return in.TableName, []string{s}
			}
		}
	}
	return in.TableName, nil
}
