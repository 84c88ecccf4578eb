package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/openapi"
)

// runCheck cross-checks a catalog's tools against an OpenAPI document and
// exits 1 when any disagree.
func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer, env lookupEnv) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("catalog", envOr(env, "GATEWAY_CATALOG", "catalog.yaml"), "catalog file (env GATEWAY_CATALOG)")
	spec := fs.String("openapi", "", "the upstream's OpenAPI document (required)")
	upstream := fs.String("upstream", "", "check only the tools of this upstream (default: every tool)")
	format := fs.String("format", "text", "output format: text or json")
	doProbe := fs.Bool("probe", false, "also call every read tool against the live upstream (never a write)")
	token := fs.String("token", "", "with --probe: the bearer token whose principal calls (default: a synthetic one in --workspace)")
	workspace := fs.String("workspace", "", "with --probe and no --token: the workspace the synthetic principal calls in")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	if *spec == "" || fs.NArg() > 0 || (*format != "text" && *format != "json") {
		fmt.Fprintln(stderr, "usage: gateway check --catalog FILE --openapi SPEC [--upstream NAME] [--format text|json] [--probe [--token T | --workspace W]]")
		return exitError(2)
	}
	cat, err := interruptible(ctx, func(context.Context) (*catalog.Catalog, error) { return loadForCLI(*path, stderr, env) })
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "gateway check: %s: stopped (%v)\n", *path, context.Cause(ctx))
			return exitError(1)
		}
		return err
	}
	data, err := os.ReadFile(*spec)
	if err != nil {
		fmt.Fprintf(stderr, "gateway check: %v\n", err)
		return exitError(1)
	}
	doc, err := interruptible(ctx, func(ctx context.Context) (*openapi.Document, error) { return openapi.ReadContext(ctx, data) })
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "gateway check: %s: stopped (%v)\n", *spec, context.Cause(ctx))
			return exitError(1)
		}
		fmt.Fprintf(stderr, "%s: %v\n", *spec, err)
		return exitError(1)
	}
	findings := openapi.Check(cat, doc, *upstream)
	var probed []probeResult
	if *doProbe {
		results, pf, err := probe(ctx, cat, doc, *token, *workspace, env)
		if err != nil {
			fmt.Fprintf(stderr, "gateway check: %v\n", err)
			return exitError(2)
		}
		probed = results
		findings = append(findings, pf...)
	}
	if *format == "json" {
		if findings == nil {
			findings = []openapi.Finding{}
		}
		out := map[string]any{"ok": len(findings) == 0, "problems": findings}
		if *doProbe {
			out["probe"] = probed
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		for _, f := range findings {
			fmt.Fprintln(stdout, f.String())
		}
		if *doProbe {
			counts := map[string]int{}
			for _, r := range probed {
				counts[r.Outcome]++
				if r.Outcome == "skipped" || r.Outcome == "denied" {
					fmt.Fprintf(stdout, "probe: %s: %s: %s\n", r.Tool, r.Outcome, r.Detail)
				}
			}
			fmt.Fprintf(stdout, "probe: %d read tools: %d ok, %d skipped, %d denied, %d with problems\n",
				len(probed), counts["ok"], counts["skipped"], counts["denied"], len(probed)-counts["ok"]-counts["skipped"]-counts["denied"])
		}
		if len(findings) == 0 {
			fmt.Fprintf(stdout, "%s: ok: %d tools agree with %s\n", *path, len(cat.Tools), *spec)
		}
	}
	if len(findings) > 0 {
		return exitError(1)
	}
	return nil
}
