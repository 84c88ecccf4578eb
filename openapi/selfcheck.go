package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgw/gateway/catalog"
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
		if im.err != nil {
			return im.err
		}
		part := im.tools[lo:min(lo+batch, len(im.tools))]
		if im.load(part) == nil {
			kept = append(kept, part...)
			continue
		}
		for _, t := range part {
			err := im.load([]*tool{t})
			for tries := 0; err != nil && im.err == nil && tries < 10 && dropBadDefault(t, err); tries++ {
				err = im.load([]*tool{t}) // the default was the document's slip: the tool stands without it
			}
			if im.err != nil {
				return im.err
			} else if err != nil {
				msg := err.Error()
				if i := strings.IndexByte(msg, '\n'); i >= 0 {
					msg = msg[:i]
				}
				if _, after, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "selfcheck.yaml") {
					msg = after
				}
				im.skip(t.method, t.docPath, "the gateway would refuse the tool: %s", bound(msg, 300))
				continue
			}
			kept = append(kept, t)
		}
	}
	im.tools = kept
	return im.err
}

// load loads tools in a small catalog of their own, as the gateway would.
// The loader's environment is watched: a variable the import did not
// write means document text reached a field the loader expands (a
// description of ${GATEWAY_JWT_SECRET} that would publish the secret), and
// that ends the import with im.err instead of writing the catalog.
func (im *importer) load(tools []*tool) error {
	root := mapping(
		"version", 1,
		"server", mapping("name", "selfcheck"),
		"auth", mapping("jwt", mapping("hmac_secret_env", selfCheckSecret, "algorithms", []string{"HS256"}, "issuer", "i", "audience", "a")),
		"gates", mapping(im.writeGate(), mapping("scopes", []string{"w"})),
	)
	add(root, "upstreams", mapping(im.opts.Upstream, im.upstream()))
	// The tools are written as result writes them, one at a time, and
	// those same bytes are what result writes: one yaml.v3 document of
	// many tools would keep all of their events until it ends.
	var buf bytes.Buffer
	if err := encodeYAML(&buf, root, ""); err != nil {
		return err
	}
	buf.WriteString("tools:\n")
	for _, t := range tools {
		y, err := im.toolYAML(t)
		if err != nil {
			return err
		}
		buf.Write(y)
	}
	var unknown []string
	getenv := func(k string) (string, bool) {
		if !im.wrote(k) {
			if !slices.Contains(unknown, k) {
				unknown = append(unknown, k)
			}
			return "", false
		}
		if strings.HasPrefix(im.opts.BaseURL, "${"+k) {
			return "http://127.0.0.1:9", true // --base-url '${API_BASE}/v2'
		}
		return anyEnv(k)
	}
	_, err := catalog.Parse("selfcheck.yaml", buf.Bytes(), &catalog.LoadOptions{Getenv: getenv})
	if len(unknown) > 0 {
		names := make([]string, len(tools))
		for i, t := range tools {
			names[i] = t.method + " " + t.docPath
		}
		im.err = fmt.Errorf("self-check: the imported catalog would read environment variable %s, which the import did not write, so text from the document reached a field the gateway expands; nothing was written (operations %s)",
			strings.Join(unknown, ", "), bound(strings.Join(names, ", "), 300))
	}
	return err
}

// selfCheckSecret is the variable the self-check catalog's auth reads.
const selfCheckSecret = "SELFCHECK_SECRET"

// envRef finds the ${NAME of a reference.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`)

// wrote reports whether the import itself wrote ${k}: the upstream's
// NAME_URL and credential placeholders, the self-check's secret, or a
// variable the operator's --base-url names.
func (im *importer) wrote(k string) bool {
	env := im.envName()
	switch k {
	case selfCheckSecret, env + "_URL", env + "_TOKEN", env + "_BASIC_AUTH", env + "_API_KEY":
		return true
	}
	for _, v := range im.queryCredentials() {
		if v == "${"+k+"}" {
			return true
		}
	}
	for _, h := range im.headerKeys() {
		if h.value == "${"+k+"}" {
			return true
		}
	}
	for _, m := range envRef.FindAllStringSubmatch(im.opts.BaseURL, -1) {
		if m[1] == k {
			return true
		}
	}
	return false
}

// anyEnv sets every placeholder the import writes to a value that loads.
func anyEnv(k string) (string, bool) {
	if strings.HasSuffix(k, "_URL") {
		return "http://127.0.0.1:9", true
	}
	return "x", true
}

// badDefault finds the argument whose default a load refused: `default
// "" of argument "end_date" does not pass its own schema` (SendGrid
// gives a date argument the default "").
var badDefault = regexp.MustCompile(`default .* of argument ("(?:[^"\\]|\\.)*") does not pass its own schema`)

// dropBadDefault takes out of t's input the default a load refused, with
// a note, and reports whether there was one to take: a default is a
// convenience the document offers, and one its own schema refuses must
// not cost the operation.
func dropBadDefault(t *tool, err error) bool {
	m := badDefault.FindStringSubmatch(err.Error())
	if m == nil {
		return false
	}
	name, uerr := strconv.Unquote(m[1])
	if uerr != nil {
		return false
	}
	props, _ := t.input["properties"].(map[string]any)
	prop, _ := props[name].(map[string]any)
	def, ok := prop["default"]
	if !ok {
		return false
	}
	delete(prop, "default")
	t.yaml = nil // written again without it
	text, _ := json.Marshal(def)
	t.notes = append(t.notes, fmt.Sprintf("default %s of argument %q left out: its own schema refuses it", bound(string(text), 60), name))
	return true
}
