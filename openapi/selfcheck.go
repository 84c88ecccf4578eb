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
func (im *importer) selfCheck() {
	kept := im.tools[:0]
	for _, t := range im.tools {
		root := mapping(
			"version", 1,
			"server", mapping("name", "selfcheck"),
			"auth", mapping("jwt", mapping("hmac_secret_env", "SELFCHECK_SECRET", "algorithms", []string{"HS256"}, "issuer", "i", "audience", "a")),
			"gates", mapping(im.writeGate(), mapping("scopes", []string{"w"})),
		)
		add(root, "upstreams", mapping(im.opts.Upstream, im.upstream()))
		add(root, "tools", &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{im.toolNode(t)}})
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		err := enc.Encode(root)
		if err == nil {
			_, err = catalog.Parse("selfcheck.yaml", buf.Bytes(), &catalog.LoadOptions{Getenv: anyEnv})
		}
		if err != nil {
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
	im.tools = kept
}

// anyEnv sets every placeholder the import writes to a value that loads.
func anyEnv(k string) (string, bool) {
	if strings.HasSuffix(k, "_URL") {
		return "http://127.0.0.1:9", true
	}
	return "x", true
}
