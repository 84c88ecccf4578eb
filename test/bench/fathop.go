//go:build fathop

package main

import (
	"fmt"
	"os"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/demo"
	"github.com/mcpgw/gateway/fleet"
	"github.com/mcpgw/gateway/mcp"
	"github.com/mcpgw/gateway/oauthserver"
	"github.com/mcpgw/gateway/openapi"
	"github.com/mcpgw/gateway/proxy"
)

// Built with -tags fathop, the harness links in and initialises the
// gateway's library packages (39 MB against 14 MB), so that its hidden
// hop subcommand is the same bare httputil.ReverseProxy in a binary
// close to the gateway's size (45 MB; the rest is the approval page and
// what cmd/gateway adds itself: Prometheus, and the OTLP exporter with
// the gRPC and protobuf packages it brings): -hop-fat-bin measures it
// beside the harness's own hop, to tell what the size of a binary (its
// code's spread, its packages' initialised data) costs a proxy from what
// the gateway's code costs.
//
//	go build -tags fathop -o /tmp/hop-fat ./test/bench
func init() {
	// Never true: the references keep the packages' code in the binary.
	if os.Getenv("GATEWAY_BENCH_FATHOP_PRINT") == "never" {
		fmt.Printf("%p %p %p %p %p %p %p %p\n", mcp.NewHandler, proxy.New, catalog.Load, openapi.ImportContext, openapi.Read, oauthserver.New, fleet.New, demo.New)
	}
}
