// Command gateway puts MCP tools in front of existing REST services, as
// declared in catalog.yaml.
//
//	gateway serve    [--catalog catalog.yaml] [--listen 127.0.0.1:8080]
//	gateway stdio    [--catalog catalog.yaml]      (identity: GATEWAY_TOKEN)
//	gateway validate [--catalog catalog.yaml]
//	gateway demo     [--listen 127.0.0.1:8080]
//	gateway import openapi SPEC --upstream NAME [-o FILE]
//	gateway token    --sub S --workspace W --scopes "a b" (--secret-env VAR | --key FILE)
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
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) > 1 && (os.Args[1] == "import" || os.Args[1] == "check") {
		limitBatchMemory()
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

const usage = `usage: gateway <command> [flags]

commands:
  serve      serve the catalog's tools over MCP (Streamable HTTP) and REST
  stdio      serve MCP on stdin/stdout for a local agent, as the token in GATEWAY_TOKEN
  validate   check a catalog and list every problem as FILE:LINE:COL: message
  demo       run the bundled catalog in front of the built-in sample upstream
  token      sign a development JWT for a catalog's HS256/RS256/ES256/EdDSA key
  check      cross-check a catalog's tools against an OpenAPI document (--catalog FILE --openapi SPEC)
  import     write catalog tools for an OpenAPI document (gateway import openapi SPEC --upstream NAME)
  tools      rank a catalog's tools for a query, as search_tools would (gateway tools search QUERY)

run "gateway <command> -h" for a command's flags
`

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env lookupEnv) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitError(2)
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return runServe(ctx, rest, stdout, stderr, env)
	case "validate":
		return runValidate(rest, stdout, stderr, env)
	case "demo":
		return runDemo(ctx, rest, stdout, stderr, env)
	case "stdio":
		return runStdio(ctx, rest, stdin, stdout, stderr, env)
	case "token":
		return runToken(rest, stdout, stderr, env)
	case "import":
		return runImport(ctx, rest, stdout, stderr)
	case "check":
		return runCheck(ctx, rest, stdout, stderr, env)
	case "tools":
		return runTools(rest, stdout, stderr, env)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "gateway: unknown command %q\n%s", cmd, usage)
	return exitError(2)
}
