package openapi

import (
	"bytes"
	"strings"

	"github.com/mcpgw/gateway/catalog"
	"gopkg.in/yaml.v3"
)

// selfCheck loads each tool the way the gateway will, in a small catalog
// of its own, and skips (with the loader's reason) any tool the gateway
// would refuse: the mapping guards against what it knows, this against
// what it does not.
func (im *importer) selfCheck() error {
	// Tools are loaded a batch at a time (a document the gateway takes
	// whole, the common case, costs one load per batch, not per tool), and
	// one at a time only inside a batch that fails. Batches keep the peak
	// memory of a large document's check to one batch's YAML and schemas.
	const batch = 64
	var kept []*tool
	for lo := 0; lo < len(im.tools); lo += batch {
		if err := im.ctx.Err(); err != nil {
			return err
		}
		part := im.tools[lo:min(lo+batch, len(im.tools))]
		if im.load(part) == nil {
			kept = append(kept, part...)
			continue
		}
		for _, t := range part {
			if err := im.load([]*tool{t}); err != nil {
				msg := err.Error()
				if i := strings.IndexByte(msg, '\n'); i >= 0 {
					msg = msg[:i]
				}
				if _, after, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "selfcheck.yaml") {
					msg = after
				}
				im.skip(t.method, t.opPath, "the gateway would refuse the tool: %s", bound(msg, 300))
				continue
			}
			kept = append(kept, t)
		}
	}
	im.tools = kept
	return nil
}

// load loads tools in a small catalog of their own, as the gateway would.
func (im *importer) load(tools []*tool) error {
	{
		root := mapping(
			"version", 1,
			"server", mapping("name", "selfcheck"),
			"auth", mapping("jwt", mapping("hmac_secret_env", "SELFCHECK_SECRET", "algorithms", []string{"HS256"}, "issuer", "i", "audience", "a")),
			"gates", mapping(im.writeGate(), mapping("scopes", []string{"w"})),
		)
		add(root, "upstreams", mapping(im.opts.Upstream, im.upstream()))
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, t := range tools {
			seq.Content = append(seq.Content, im.toolNode(t))
		}
		add(root, "tools", seq)
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		err := enc.Encode(root)
		if err == nil {
			_, err = catalog.Parse("selfcheck.yaml", buf.Bytes(), &catalog.LoadOptions{Getenv: anyEnv})
		}
		return err
	}
}

// anyEnv sets every placeholder the import writes to a value that loads.
func anyEnv(k string) (string, bool) {
	if strings.HasSuffix(k, "_URL") {
		return "http://127.0.0.1:9", true
	}
	return "x", true
}
