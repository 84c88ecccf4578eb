// Command gateway puts MCP tools in front of existing REST services, as
// declared in catalog.yaml. Its commands are the table in commands below;
// "gateway help" prints them.
//
// main handles signals and exit codes; the work is in run, which tests call.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) > 1 {
		if c := lookupCommand(os.Args[1]); c != nil && c.batch {
			limitBatchMemory()
		}
	}
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.LookupEnv)
	var ee exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		os.Exit(int(ee))
	default:
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}

// exitError exits with its code after the command has said why.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// lookupEnv is os.LookupEnv's shape; tests and the demo overlay it.
type lookupEnv func(string) (string, bool)

func (l lookupEnv) get(k string) string { v, _ := l(k); return v }

// with returns l with extra variables set on top.
func (l lookupEnv) with(extra map[string]string) lookupEnv {
	return func(k string) (string, bool) {
		if v, ok := extra[k]; ok {
			return v, true
		}
		return l(k)
	}
}

// streams are the command's standard streams.
type streams struct {
	in          io.Reader
	out, errOut io.Writer
}

// command is one of gateway's commands: the one table that run, the
// usage text and the docs' command list are checked against.
type command struct {
	name  string
	short string // one line for the usage text
	// batch commands read untrusted documents once and exit: they run
	// under a soft memory limit (limitBatchMemory).
	batch bool
	// sub is the subcommand whose flags "-h" lists ("openapi" for
	// import), "" when the command takes flags itself.
	sub string
	run func(ctx context.Context, args []string, s streams, env lookupEnv) error
}

var commands = []command{
	{name: "serve", short: "serve the catalog's tools over MCP (Streamable HTTP) and REST",
		run: func(ctx context.Context, a []string, s streams, env lookupEnv) error {
			return runServe(ctx, a, s.out, s.errOut, env)
		}},
	{name: "stdio", short: "serve MCP on stdin/stdout for a local agent, as the token in GATEWAY_TOKEN",
		run: func(ctx context.Context, a []string, s streams, env lookupEnv) error {
			return runStdio(ctx, a, s.in, s.out, s.errOut, env)
		}},
	{name: "validate", short: "check a catalog and list every problem as FILE:LINE:COL: message",
		run: func(_ context.Context, a []string, s streams, env lookupEnv) error {
			return runValidate(a, s.out, s.errOut, env)
		}},
	{name: "demo", short: "run the bundled catalog in front of the built-in sample upstream",
		run: func(ctx context.Context, a []string, s streams, env lookupEnv) error {
			return runDemo(ctx, a, s.out, s.errOut, env)
		}},
	{name: "token", short: "sign a development JWT for a catalog's HS256/RS256/ES256/EdDSA key",
		run: func(_ context.Context, a []string, s streams, env lookupEnv) error {
			return runToken(a, s.out, s.errOut, env)
		}},
	{name: "check", short: "cross-check a catalog's tools against an OpenAPI document (--catalog FILE --openapi SPEC)", batch: true,
		run: func(ctx context.Context, a []string, s streams, env lookupEnv) error {
			return runCheck(ctx, a, s.out, s.errOut, env)
		}},
	{name: "import", short: "write catalog tools for an OpenAPI document (gateway import openapi SPEC --upstream NAME)", batch: true, sub: "openapi",
		run: func(ctx context.Context, a []string, s streams, _ lookupEnv) error {
			return runImport(ctx, a, s.out, s.errOut)
		}},
	{name: "schema", short: "print the JSON Schema of catalog.yaml and its fragments, for editors",
		run: func(_ context.Context, a []string, s streams, _ lookupEnv) error {
			return runSchema(a, s.out, s.errOut)
		}},
	{name: "tools", short: "rank a catalog's tools for a query, as search_tools would (gateway tools search QUERY)", sub: "search",
		run: func(_ context.Context, a []string, s streams, env lookupEnv) error {
			return runTools(a, s.out, s.errOut, env)
		}},
}

func lookupCommand(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// usage is the text "gateway help" prints, made from the table.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: gateway <command> [flags]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-10s %s\n", c.name, c.short)
	}
	b.WriteString("\nrun \"gateway <command> -h\" for a command's flags\n")
	return b.String()
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env lookupEnv) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return exitError(2)
	}
	name, rest := args[0], args[1:]
	if c := lookupCommand(name); c != nil {
		return c.run(ctx, rest, streams{stdin, stdout, stderr}, env)
	}
	switch name {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage())
		return nil
	}
	fmt.Fprintf(stderr, "gateway: unknown command %q\n%s", name, usage())
	return exitError(2)
}
