package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/openapi"
	"github.com/mcpgw/gateway/proxy"
)

// probeResult is what happened to one read tool under gateway check --probe.
type probeResult struct {
	Tool      string `json:"tool"`
	Operation string `json:"operation,omitempty"`
	// Outcome: ok, mismatch (the answer breaks its expected shape),
	// error (a tool error: the upstream's status and reason), not_found,
	// denied, or skipped (nothing was sent).
	Outcome string `json:"outcome"`
	Detail  string `json:"detail,omitempty"`
}

// probe calls every read tool of cat through the proxy core, the same
// request builder, bindings and rendering a client's call goes through,
// and holds each answer to the shape the document or output_schema
// promises. Write tools are never called. A read bound to GET or HEAD is
// called with its probe.args, or arguments from the examples; a read
// bound to POST (a query: POST /flow_runs/filter) only with probe.args,
// the operator's word that this call, with these arguments, changes
// nothing; a read bound to PUT, PATCH or DELETE never (the static check
// reports it). The principal is the token's
// (verified by the catalog's own auth) or, without one, a synthetic
// principal in workspace holding every gate's scopes; sensitive tools are
// then skipped.
func probe(ctx context.Context, cat *catalog.Catalog, doc *openapi.Document, token, workspace string, env lookupEnv) ([]probeResult, []openapi.Finding, error) {
	core, err := proxy.New(cat, &proxy.Options{Getenv: env.get, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, nil, err
	}
	var p *authz.Principal
	if token != "" {
		v, err := authz.NewVerifier(cat.Auth, &authz.VerifierOptions{Getenv: env.get, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			return nil, nil, err
		}
		defer closeVerifier(v)
		if p, err = v.Verify(ctx, token); err != nil {
			return nil, nil, fmt.Errorf("--token: %w", err)
		}
	} else {
		if workspace == "" && !cat.Auth.Principal.WorkspaceOptional {
			return nil, nil, errors.New("--probe needs --token, or --workspace for a synthetic principal")
		}
		var scopes []string
		for _, g := range cat.Gates {
			for _, s := range g.Scopes {
				if !slices.Contains(scopes, s) {
					scopes = append(scopes, s)
				}
			}
		}
		p = authz.NewPrincipal("gateway-check", workspace, "gateway-check", scopes, nil)
	}
	var results []probeResult
	var findings []openapi.Finding
	tools := slices.Clone(cat.Tools)
	slices.SortFunc(tools, func(a, b *catalog.Tool) int { return strings.Compare(a.Name, b.Name) })
	for _, t := range tools {
		if t.Kind != catalog.KindRead {
			continue // never: a probe must not change anything
		}
		r := probeResult{Tool: t.Name, Operation: openapi.OperationOf(doc, t)}
		finding := func(format string, args ...any) {
			findings = append(findings, openapi.NewFinding(cat, t, t.Pos, r.Operation, "probe: "+format, args...))
		}
		args, missing := openapi.ProbeArguments(doc, t)
		safe := t.Request.Method == http.MethodGet || t.Request.Method == http.MethodHead
		switch {
		case !safe && t.Request.Method == http.MethodPost && t.Probe == nil:
			// A POST changes state unless someone who knows the upstream
			// says, with the arguments to send, that this one does not.
			r.Outcome, r.Detail = "skipped", "POST may change state: the probe sends it only with the tool's probe.args"
			results = append(results, r)
			continue
		case !safe && t.Request.Method != http.MethodPost:
			// A read tool bound to PUT, PATCH or DELETE changes state (the
			// static check says so): the probe never sends it.
			r.Outcome, r.Detail = "skipped", t.Request.Method+" may change state: the probe sends only GET and HEAD, and POST with probe.args"
			results = append(results, r)
			continue
		case t.Sensitive && token == "":
			r.Outcome, r.Detail = "skipped", "sensitive: pass --token to probe it"
			results = append(results, r)
			continue
		case len(missing) > 0:
			r.Outcome, r.Detail = "skipped", "no example, default or enum for required argument(s) "+strings.Join(missing, ", ")+": give the tool probe.args"
			results = append(results, r)
			continue
		}
		raw, _ := json.Marshal(args)
		res, err := core.Call(ctx, p, t.Name, raw)
		switch {
		case err != nil:
			r.Outcome, r.Detail = "error", err.Error()
			finding("%s", err.Error())
		case res.Outcome == proxy.OutcomeDenied:
			r.Outcome, r.Detail = "denied", res.Text
		case res.Outcome == proxy.OutcomeNotFound:
			r.Outcome, r.Detail = "not_found", "arguments "+string(raw)+" name nothing upstream"
			finding("arguments %s name nothing upstream (not_found)", raw)
		case res.IsError:
			r.Outcome, r.Detail = "error", res.Text
			finding("%s", res.Text)
		default:
			r.Outcome = "ok"
			schemas := openapi.ResultSchemas(doc, t)
			for _, name := range slices.Sorted(maps.Keys(schemas)) {
				if msg := openapi.CheckShape(schemas[name], res.Structured); msg != "" {
					r.Outcome, r.Detail = "mismatch", name+": "+msg
					finding("the answer does not fit %s: %s", name, msg)
				}
			}
		}
		results = append(results, r)
	}
	return results, findings, nil
}
