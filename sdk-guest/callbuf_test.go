package guest_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dynafold/dynafold/abi"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// TestY8_ConcurrentCallsKeepTheirOwnAnswers: calls of one plugin from many
// goroutines at once (their buffers pooled) each get the answer to their
// own request, also after a call that failed and one whose request was
// larger than the buffers kept.
func TestY8_ConcurrentCallsKeepTheirOwnAnswers(t *testing.T) {
	p := guest.MustNew(testProjection)
	big := abi.S(strings.Repeat("x", 100<<10)) // past the largest buffer kept
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				id := fmt.Sprintf("g%d-%d", g, i)
				by := strconv.Itoa(g*1000 + i)
				e := abi.Event{Stream: "C", StreamID: id, Version: 1, Type: "Inc", Data: abi.Item{"_tag": abi.S("Inc"), "by": abi.N(by)}}
				if i%50 == 7 {
					e.Data["pad"] = big
				}
				k, err := p.Key(&abi.KeyRequest{Source: "C", Events: []abi.Event{e, e}})
				if err != nil || len(k.Keys) != 2 || k.Keys[0].Key["pk"].Str != "C#"+id || k.Keys[1].Key["pk"].Str != "C#"+id {
					errs <- fmt.Errorf("key of %s: %+v, %v", id, k, err)
					return
				}
				r, err := p.Evolve(&abi.EvolveRequest{Key: k.Keys[0].Key, StreamID: id, Events: []abi.SourcedEvent{{Source: "C", Event: e}}})
				if err != nil || r.State["id"].Str != id || r.State["n"].Str != by {
					errs <- fmt.Errorf("evolve of %s: %+v, %v", id, r, err)
					return
				}
				if i%20 == 3 { // a call that fails: its buffers are not reused
					if _, err := p.Key(&abi.KeyRequest{Source: "nope", Events: []abi.Event{e}}); err == nil {
						errs <- fmt.Errorf("key of %s for an unknown source did not fail", id)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
