package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpgw/gateway/openapi"
)

const importUsage = `usage: gateway import openapi SPEC --upstream NAME [--base-url URL] [--tags a,b]
       [--include-writes] [--workspace-param P[,P...]] [--allow-unbound] [--actor-header H]
       [--standalone] [-o FILE]
`

// runImport writes a catalog fragment (or, with --standalone, a whole
// catalog) for an OpenAPI document; skipped operations and the guesses
// that decide what a caller can reach (sensitive, not tenant-bound) go to
// stderr.
func runImport(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "openapi" {
		fmt.Fprint(stderr, importUsage)
		return exitError(2)
	}
	fs := flag.NewFlagSet("import openapi", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, importUsage); fs.PrintDefaults() }
	var opts openapi.Options
	var tags, out string
	fs.StringVar(&opts.Upstream, "upstream", "", "name of the upstream the tools call (required)")
	fs.StringVar(&opts.BaseURL, "base-url", "", "the upstream's base_url (default: the document's first server, as ${NAME_URL:-...})")
	fs.StringVar(&tags, "tags", "", "comma-separated OpenAPI tags: import only operations carrying one")
	fs.BoolVar(&opts.IncludeWrites, "include-writes", false, "import non-GET operations as write tools behind a gate")
	fs.StringVar(&opts.WorkspaceParam, "workspace-param", "", "comma-separated parameters bound to the caller's workspace in any spelling and place, never arguments; operations not bound are left out")
	fs.BoolVar(&opts.AllowUnbound, "allow-unbound", false, "with --workspace-param, import operations that are not tenant-bound too, each with a note")
	fs.StringVar(&opts.ActorHeader, "actor-header", "", "header parameter carrying the acting identity: the upstream's actor_header, never an argument")
	fs.BoolVar(&opts.Standalone, "standalone", false, "write a complete catalog with placeholder auth instead of a fragment")
	fs.StringVar(&out, "o", "", "output file (default stdout)")
	// The document comes first (gateway import openapi SPEC --upstream x);
	// flags may also precede it.
	rest := args[1:]
	var spec string
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		spec, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return exitError(2)
	}
	if spec == "" && fs.NArg() == 1 {
		spec = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gateway import openapi: unexpected arguments %q\n", fs.Args())
		return exitError(2)
	}
	if spec == "" || opts.Upstream == "" {
		fs.Usage()
		return exitError(2)
	}
	for _, t := range strings.Split(tags, ",") {
		if t = strings.TrimSpace(t); t != "" {
			opts.Tags = append(opts.Tags, t)
		}
	}
	data, err := os.ReadFile(spec)
	if err != nil {
		fmt.Fprintf(stderr, "gateway import openapi: %v\n", err)
		return exitError(1)
	}
	doc, err := openapi.Read(data)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", spec, err)
		return exitError(1)
	}
	res, err := openapi.Import(doc, opts)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", spec, err)
		return exitError(1)
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(stderr, "skipped %s\n", s)
	}
	for _, f := range res.Flagged {
		fmt.Fprintf(stderr, "guess %s\n", f)
	}
	if out == "" {
		_, err = stdout.Write(res.YAML)
	} else {
		err = os.WriteFile(out, res.YAML, 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "gateway import openapi: %v\n", err)
		return exitError(1)
	}
	fmt.Fprintf(stderr, "%s: %d tools, %d operations skipped\n", spec, res.Tools, len(res.Skipped))
	return nil
}
