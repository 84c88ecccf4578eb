package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"time"

	gateway "github.com/mcpgw/gateway"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/demo"
)

// demoWorkspace is the demo tenant the printed tokens belong to; it has a
// knowledge base. The other tenant, globex, has none.
const demoWorkspace = "acme"

// otherWorkspace is the demo's second tenant, for trying isolation.
const otherWorkspace = "globex"

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer, env lookupEnv) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", envOr(env, "GATEWAY_LISTEN", catalog.DefaultListen), "listen address (env GATEWAY_LISTEN)")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	logger, auditLog, closeLogs := newLogs(stderr, env)
	defer closeLogs()

	serviceToken := randomHex(16)
	upURL, stopUpstream, err := demo.Start(ctx, demo.Options{ServiceToken: serviceToken})
	if err != nil {
		return fmt.Errorf("starting the demo upstream: %w", err)
	}
	defer stopUpstream()

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	secret := randomHex(32)
	env = env.with(map[string]string{
		"GATEWAY_JWT_SECRET": secret,
		"DEMO_SERVICE_TOKEN": serviceToken,
		"MONITOR_URL":        upURL,
		"OPERATOR_URL":       upURL,
		"KB_URL":             upURL,
		"GATEWAY_AUDIENCE":   base + "/mcp",
	})
	cat, err := catalog.Parse("catalog.yaml (embedded)", gateway.DefaultCatalog, &catalog.LoadOptions{Getenv: env})
	if err != nil {
		ln.Close()
		return fmt.Errorf("the embedded catalog does not load: %w", err)
	}
	rt := newRuntime(env, logger, newMetrics())
	rt.auditLog = auditLog

	var allScopes []string
	for _, g := range cat.Gates {
		allScopes = append(allScopes, g.Scopes...)
	}
	slices.Sort(allScopes)
	allScopes = slices.Compact(allScopes)
	viewScopes := []string{}
	if g := cat.Gates[catalog.ViewGate]; g != nil {
		viewScopes = g.Scopes
	}
	var mkIn func(ws, sub, actor string, scopes []string) (string, error)
	mk := func(sub, actor string, scopes []string) (string, error) {
		return mkIn(demoWorkspace, sub, actor, scopes)
	}
	mkIn = func(ws, sub, actor string, scopes []string) (string, error) {
		spec := tokenSpec{subject: sub, workspace: ws, actor: actor, scopes: scopes,
			issuer: cat.Auth.JWT.Issuer, audience: cat.Auth.JWT.Audience, ttl: 12 * time.Hour, paths: cat.Auth.Principal}
		return sign(spec.claims(time.Now()), []byte(secret), nil)
	}
	viewer, err := mk("viewer@example.com", "viewer@example.com", viewScopes)
	if err != nil {
		return err
	}
	// A reader of the other tenant, so the tour's isolation claims can
	// be tried: it sees no knowledge base and none of acme's jobs.
	other, err := mkIn(otherWorkspace, "viewer@globex.example", "viewer@globex.example", viewScopes)
	if err != nil {
		return err
	}
	operator, err := mk("operator@example.com", "operator@example.com", allScopes)
	if err != nil {
		return err
	}
	// The approver approves four-eyes calls (cancel_workflow) that the
	// operator makes: another person, in the same workspace, with the
	// approve gate.
	approverScopes := slices.Clone(viewScopes)
	if g := cat.Gates["approve"]; g != nil {
		approverScopes = append(approverScopes, g.Scopes...)
	}
	approver, err := mk("approver@example.com", "approver@example.com", approverScopes)
	if err != nil {
		return err
	}
	mcpURL := base + cat.Server.MCPPath
	banner := func() {
		fmt.Fprintf(stdout, `gateway demo: %d tools in front of the sample job system (workspace %q)

  MCP endpoint:   %s
  REST mirror:    %s%s/tools

  viewer token (reads only: %v):
%s

  operator token (every gate: %v):
%s

  approver token (approves the operator's cancel_workflow calls: %v):
%s

  viewer token of the other workspace, %q (no knowledge base, none of acme's jobs):
%s

  pause_queue asks the operator to confirm in their client; cancel_workflow
  waits until the approver approves it:
curl -H "Authorization: Bearer $APPROVER" %s%s/approvals
curl -X POST -H "Authorization: Bearer $APPROVER" %s%s/approvals/ID/approve

  connect Claude Code:
claude mcp add --transport http backwave %s --header "Authorization: Bearer %s"

Ctrl-C stops the gateway and the sample upstream.
`, len(cat.Tools), demoWorkspace, mcpURL, base, cat.Server.AdminPath, viewScopes, viewer, allScopes, operator, approverScopes, approver, otherWorkspace, other, base, cat.Server.AdminPath, base, cat.Server.AdminPath, mcpURL, operator)
	}
	// The banner goes out once the gateway answers, so its commands work
	// the moment they are read.
	return serve(ctx, ln, rt, cat, serveOptions{metricsListen: envOr(env, "GATEWAY_METRICS_LISTEN", ""), ready: banner})
}
