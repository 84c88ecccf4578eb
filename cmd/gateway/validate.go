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
	cat, err := loadForCLI(*path, stderr, env)
	if err != nil {
		return err
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

// loadForCLI loads the catalog at path for a command: each problem on its
// own FILE:LINE:COL line on stderr, and exit status 1 when it does not
// load.
func loadForCLI(path string, stderr io.Writer, env lookupEnv) (*catalog.Catalog, error) {
	cat, err := catalog.Load(path, &catalog.LoadOptions{Getenv: env})
	if err == nil {
		return cat, nil
	}
	if le, ok := errors.AsType[*catalog.LoadError](err); ok {
		for _, p := range le.Problems {
			fmt.Fprintln(stderr, p.String())
		}
	} else {
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
	}
	return nil, exitError(1)
}
