package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/mcpgw/gateway/openapi"
)

const importUsage = `usage: gateway import openapi SPEC --upstream NAME [--base-url URL] [--tags a,b]
       [--include-writes] [--reads 'POST /*/filter']... [--workspace-param P[,P...]] [--allow-unbound]
       [--actor-header H]
       [--standalone] [-o FILE]
`

// listFlag is a repeatable flag whose values may also be comma-separated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// runImport writes a catalog fragment (or, with --standalone, a whole
// catalog) for an OpenAPI document; skipped operations and the guesses
// that decide what a caller can reach (sensitive, not tenant-bound) go to
// stderr.
func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
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
	fs.StringVar(&tags, "tags", "", "comma-separated OpenAPI tags, any case: import only operations carrying one")
	fs.BoolVar(&opts.IncludeWrites, "include-writes", false, "import non-GET operations as write tools behind a gate")
	var reads listFlag
	fs.Var(&reads, "reads", "`METHOD /path` glob of operations to import as reads, no gate ('POST /*/filter', '* /search'); repeatable or comma-separated")
	fs.StringVar(&opts.WorkspaceParam, "workspace-param", "", "comma-separated parameters bound to the caller's workspace in any spelling and place, never arguments; operations not bound are left out")
	fs.BoolVar(&opts.AllowUnbound, "allow-unbound", false, "with --workspace-param, import operations that are not tenant-bound too, each with a note")
	fs.StringVar(&opts.ActorHeader, "actor-header", "", "header parameter carrying the acting identity: the upstream's actor_header, never an argument")
	fs.BoolVar(&opts.Standalone, "standalone", false, "write a complete catalog with placeholder auth instead of a fragment")
	fs.StringVar(&out, "o", "", "output file (default stdout); an earlier import there keeps its tool names on their operations")
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
	opts.Reads = reads
	if out != "" {
		// Re-importing over an earlier import keeps its names on their
		// operations, so the catalog's overrides keep naming the same ones.
		if prev, err := os.ReadFile(out); err == nil {
			opts.Previous = prev
		}
	}
	data, err := os.ReadFile(spec)
	if err != nil {
		fmt.Fprintf(stderr, "gateway import openapi: %v\n", err)
		return exitError(1)
	}
	res, err := interruptible(ctx, func(ctx context.Context) (*openapi.Result, error) {
		doc, err := openapi.ReadContext(ctx, data)
		if err != nil {
			return nil, err
		}
		return openapi.ImportContext(ctx, doc, opts)
	})
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "gateway import openapi: %s: stopped (%v); nothing was written\n", spec, context.Cause(ctx))
			return exitError(1)
		}
		fmt.Fprintf(stderr, "%s: %v\n", spec, err)
		return exitError(1)
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(stderr, "skipped %s\n", s)
	}
	for _, r := range res.Reads {
		fmt.Fprintf(stderr, "read (no write gate) %s\n", r)
	}
	if res.Tools == 0 {
		// A catalog without tools does not load; writing one would only
		// move the failure to the next command.
		why := "the document has no operations"
		if len(res.Skipped) > 0 {
			why = fmt.Sprintf("all %d operations were skipped (listed above)", len(res.Skipped))
			if !opts.IncludeWrites && allWrites(res.Skipped) {
				why += "; they are writes: pass --include-writes, or --reads for those that only read"
			}
		}
		fmt.Fprintf(stderr, "%s: no tool imported, nothing written: %s\n", spec, why)
		return exitError(1)
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

// allWrites reports whether every operation was skipped for being a write.
func allWrites(skipped []openapi.Skipped) bool {
	for _, s := range skipped {
		if !strings.HasPrefix(s.Reason, "write operation") {
			return false
		}
	}
	return true
}

// interruptible runs work and returns its answer, or ctx's error as soon
// as ctx ends (SIGINT or SIGTERM): the work checks ctx between its steps,
// but one step (parsing a large document) can take seconds, and a command
// asked to stop must not make the operator wait for it. The process exits
// right after, which ends the abandoned work.
func interruptible[T any](ctx context.Context, work func(context.Context) (T, error)) (T, error) {
	type answer struct {
		v   T
		err error
	}
	done := make(chan answer, 1)
	go func() {
		v, err := work(ctx)
		done <- answer{v, err}
	}()
	select {
	case a := <-done:
		return a.v, a.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// batchMemoryLimit is the soft memory limit of import and check, which
// run once and hold a whole document: without one, the collector lets
// the heap grow to twice what was live at its last cycle, and a 20 MB
// description (a model of hundreds of megabytes, built in one pass)
// peaked past a gigabyte. With it the collector works harder near the
// limit instead. GOMEMLIMIT, when set, wins.
const batchMemoryLimit = 640 << 20

func limitBatchMemory() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(batchMemoryLimit)
	}
}
