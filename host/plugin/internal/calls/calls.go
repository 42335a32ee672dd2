// Package calls holds the typed key and evolve calls both plugin transports
// (host/plugin's raw ABI and host/plugin/extism) make over their encoded
// call: how each request is encoded and how its response is decoded and
// checked against the request. A transport passes the methods to its own
// call function, so the values stay on the caller's stack.
package calls

import (
	"fmt"

	"github.com/dynafold/dynafold/abi"
)

// Key is one key call.
type Key struct {
	Req  *abi.KeyRequest
	Resp *abi.KeyResponse
}

// Encode appends the request to dst.
func (c *Key) Encode(dst []byte) []byte { return abi.AppendKeyRequest(dst, c.Req) }

// Decode decodes the response: one key per event of the request.
func (c *Key) Decode(body []byte) (err error) {
	if c.Resp, err = abi.DecodeKeyResponse(body); err != nil {
		return err
	}
	if len(c.Resp.Keys) != len(c.Req.Events) {
		return fmt.Errorf("%d keys for %d events", len(c.Resp.Keys), len(c.Req.Events))
	}
	return nil
}

// Evolve is one evolve call.
type Evolve struct {
	Req  *abi.EvolveRequest
	Resp *abi.EvolveResponse
}

// Encode appends the request to dst.
func (c *Evolve) Encode(dst []byte) []byte { return abi.AppendEvolveRequest(dst, c.Req) }

// Decode decodes the response: at most one decision per event of the
// request (the run stops after a Failed one).
func (c *Evolve) Decode(body []byte) (err error) {
	if c.Resp, err = abi.DecodeEvolveResponse(body); err != nil {
		return err
	}
	if len(c.Resp.Decisions) > len(c.Req.Events) {
		return fmt.Errorf("%d decisions for %d events", len(c.Resp.Decisions), len(c.Req.Events))
	}
	return nil
}
