package deliver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/deliver"
)

// An effect as the host hands it to a target.
func notice() deliver.Effect {
	return deliver.Effect{
		Stream: "Order", StreamID: "o-1", Version: 3, Index: 0,
		Key:   abi.Item{"pk": abi.S("SHIP#s-1")},
		Value: abi.M(abi.Item{"kind": abi.S("at Hamburg"), "kg": abi.N("12.50")}),
	}
}

func ExampleFunc() {
	target := deliver.Func(func(ctx context.Context, e deliver.Effect) error {
		fmt.Printf("%s %s v%d #%d: %s\n", e.Stream, e.StreamID, e.Version, e.Index, e.Value.Map["kind"].Str)
		return nil
	})
	if err := target.Deliver(context.Background(), notice()); err != nil {
		fmt.Println(err)
	}
	// Output: Order o-1 v3 #0: at Hamburg
}

func ExampleWebhook() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Println(r.Header.Get("Content-Type"), len(r.Header.Get("Idempotency-Key")))
		fmt.Println(string(body))
	}))
	defer srv.Close()

	hook, err := deliver.NewWebhook(srv.URL, deliver.WebhookOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := hook.Deliver(context.Background(), notice()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// application/json 64
	// {"idempotencyKey":"92fafc69dc016bffbbca32577e2b03c977241f21a3443265d760de40af104068","stream":"Order","streamId":"o-1","version":3,"index":0,"key":{"pk":"SHIP#s-1"},"effect":{"kg":12.50,"kind":"at Hamburg"}}
}
