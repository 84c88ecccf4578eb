package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/mcpgw/gateway/proxy"
)

const toolsUsage = `usage: gateway tools search [--catalog FILE] [--limit N] [--kind read|write] [--tag T] QUERY...
`

// runTools ranks a catalog's tools offline, as search_tools would for a
// caller who may see them all, so an operator can tune titles,
// descriptions and tags. Variables the catalog names but the environment
// lacks get placeholders: ranking reads no secret.
func runTools(args []string, stdout, stderr io.Writer, env lookupEnv) error {
	if len(args) == 0 || args[0] != "search" {
		fmt.Fprint(stderr, toolsUsage)
		return exitError(2)
	}
	fs := flag.NewFlagSet("tools search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, toolsUsage); fs.PrintDefaults() }
	path := fs.String("catalog", envOr(env, "GATEWAY_CATALOG", "catalog.yaml"), "catalog file (env GATEWAY_CATALOG)")
	var q proxy.SearchQuery
	fs.IntVar(&q.Limit, "limit", proxy.DefaultSearchLimit, fmt.Sprintf("how many tools to show (1 to %d)", proxy.MaxSearchLimit))
	fs.StringVar(&q.Kind, "kind", "", "only read or only write tools")
	var tag string
	fs.StringVar(&tag, "tag", "", "only tools carrying this tag")
	if err := fs.Parse(args[1:]); err != nil {
		return exitError(2)
	}
	if tag != "" {
		q.Tags = []string{tag}
	}
	q.Query = strings.Join(fs.Args(), " ")
	cat, err := loadForCLI(*path, stderr, placeholderEnv(env))
	if err != nil {
		return err
	}
	core, err := proxy.New(cat, nil)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", *path, err)
		return exitError(1)
	}
	found, err := core.SearchCatalog(q)
	if errors.Is(err, proxy.ErrBadSearch) {
		fmt.Fprintf(stderr, "gateway tools search: %v\n", err)
		return exitError(2)
	}
	for i, l := range found {
		desc, _, _ := strings.Cut(l.Tool.Description, "\n")
		if len(desc) > 100 {
			desc = desc[:97] + "..."
		}
		fmt.Fprintf(stdout, "%2d. %s (%s): %s\n", i+1, l.Tool.Name, l.Tool.Kind, desc)
	}
	if len(found) == 0 {
		fmt.Fprintln(stderr, "no tool matches")
	}
	return nil
}

// placeholderEnv is env with a stand-in for every variable it lacks: a
// loopback URL for names ending in _URL, "1" for the rest.
func placeholderEnv(env lookupEnv) lookupEnv {
	return func(k string) (string, bool) {
		if v, ok := env(k); ok {
			return v, true
		}
		if strings.HasSuffix(k, "_URL") {
			return "http://127.0.0.1:9", true
		}
		return "1", true
	}
}
