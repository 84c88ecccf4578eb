package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/mcpgw/gateway/catalog"
)

func runValidate(args []string, stdout, stderr io.Writer, env lookupEnv) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("catalog", envOr(env, "GATEWAY_CATALOG", "catalog.yaml"), "catalog file (env GATEWAY_CATALOG)")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	cat, err := catalog.Load(*path, &catalog.LoadOptions{Getenv: env})
	if err != nil {
		var le *catalog.LoadError
		if errors.As(err, &le) {
			for _, p := range le.Problems {
				fmt.Fprintln(stderr, p.String())
			}
			return exitError(1)
		}
		fmt.Fprintf(stderr, "%s: %v\n", *path, err)
		return exitError(1)
	}
	for _, w := range cat.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	reads, writes := 0, 0
	for _, t := range cat.Tools {
		if t.Kind == catalog.KindWrite {
			writes++
		} else {
			reads++
		}
	}
	fmt.Fprintf(stdout, "%s: ok: %d tools (%d reads, %d writes), %d upstreams, %d gates\n",
		*path, len(cat.Tools), reads, writes, len(cat.Upstreams), len(cat.Gates))
	return nil
}

func envOr(env lookupEnv, key, def string) string {
	if v, ok := env(key); ok && v != "" {
		return v
	}
	return def
}
