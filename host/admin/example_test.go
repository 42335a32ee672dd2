package admin_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/dynafold/dynafold/host/admin"
	"github.com/dynafold/dynafold/host/telemetry"
)

// A reader reports to the metrics; the admin server shows them. In a host,
// pass m.PluginCall to host.WithCallObserver and call m.ServePlugins(h).
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := telemetry.New(telemetry.Options{})
	m.ShardRead("Order", "shardId-0001", 25, 2*time.Second)

	srv, err := admin.Start(ctx, admin.Options{Addr: "127.0.0.1:0", Metrics: m})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	resp, err := http.Get(srv.URL() + "/metrics")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "dynafold_records_read_total") || strings.HasPrefix(line, "dynafold_shard_iterator_age_seconds") {
			fmt.Println(line)
		}
	}
	// Output:
	// dynafold_records_read_total{stream="Order"} 25
	// dynafold_shard_iterator_age_seconds{shard="shardId-0001",stream="Order"} 2
}
