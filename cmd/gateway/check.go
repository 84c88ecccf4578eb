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
	findings, err := interruptible(ctx, func(context.Context) ([]openapi.Finding, error) {
		return openapi.Check(cat, doc, *upstream), nil
	})
	if err != nil {
		fmt.Fprintf(stderr, "gateway check: %s: stopped (%v)\n", *spec, context.Cause(ctx))
		return exitError(1)
	}
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
	sum := checkSummary{Tools: 0, Operations: doc.Operations(), Problems: len(findings)}
	for _, t := range cat.Tools {
		if *upstream == "" || t.Request.Upstream == *upstream {
			sum.Tools++
		}
	}
	if *doProbe {
		sum.Probe = summarizeProbe(probed)
	}
	if *format == "json" {
		if findings == nil {
			findings = []openapi.Finding{}
		}
		out := map[string]any{"ok": len(findings) == 0, "problems": findings, "summary": sum}
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
		for _, r := range probed {
			if r.Outcome == "skipped" || r.Outcome == "denied" {
				fmt.Fprintf(stdout, "probe: %s: %s: %s\n", r.Tool, r.Outcome, r.Detail)
			}
		}
		fmt.Fprintf(stdout, "%s: %s\n", *path, sum.text(*spec))
	}
	if len(findings) > 0 {
		return exitError(1)
	}
	return nil
}

// checkSummary counts what gateway check looked at; its text is the last
// line of the text output, in one fixed wording:
//
//	catalog.yaml: checked 11 tools against 14 operations in openapi.yaml: 0 problems
//	catalog.yaml: checked 11 tools against 14 operations in openapi.yaml: 1 problem; probed 8 of 10 read tools: 7 ok, 1 with problems, 2 skipped, 0 denied
type checkSummary struct {
	// Tools is the number of tools checked (those of --upstream, or all).
	Tools int `json:"tools"`
	// Operations is the number of operations the document describes.
	Operations int `json:"operations"`
	// Problems is the number of problems, the probe's included.
	Problems int           `json:"problems"`
	Probe    *probeSummary `json:"probe,omitempty"`
}

// probeSummary counts the read tools --probe looked at by outcome.
// Probed is the number it called upstream: Ok plus WithProblems.
type probeSummary struct {
	Reads        int `json:"reads"`
	Probed       int `json:"probed"`
	Ok           int `json:"ok"`
	WithProblems int `json:"with_problems"`
	Skipped      int `json:"skipped"`
	Denied       int `json:"denied"`
}

func summarizeProbe(results []probeResult) *probeSummary {
	s := &probeSummary{Reads: len(results)}
	for _, r := range results {
		switch r.Outcome {
		case "ok":
			s.Ok++
		case "skipped":
			s.Skipped++
		case "denied":
			s.Denied++
		default:
			s.WithProblems++
		}
	}
	s.Probed = s.Ok + s.WithProblems
	return s
}

func (s checkSummary) text(spec string) string {
	out := fmt.Sprintf("checked %s against %s in %s: %s", plural(s.Tools, "tool"), plural(s.Operations, "operation"), spec, plural(s.Problems, "problem"))
	if p := s.Probe; p != nil {
		out += fmt.Sprintf("; probed %d of %s: %d ok, %d with problems, %d skipped, %d denied", p.Probed, plural(p.Reads, "read tool"), p.Ok, p.WithProblems, p.Skipped, p.Denied)
	}
	return out
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
