package main

import (
	"flag"
	"io"

	"github.com/mcpgw/gateway/catalog"
)

// runSchema prints the JSON Schema of catalog.yaml (and of the fragments
// it includes): editors that speak YAML-language-server validate and
// complete a catalog whose first line is catalog.SchemaComment.
func runSchema(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("schema", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		io.WriteString(stderr, "usage: gateway schema > catalog.schema.json\n\nPrints the JSON Schema of a catalog or fragment. Point an editor at it with\n"+catalog.SchemaComment+"\n")
	}
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitError(2)
	}
	_, err := stdout.Write(catalog.JSONSchema())
	return err
}
