package gateway_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every relative link in the README and the docs leads somewhere: the
// file exists, and a #fragment names a heading of it (GitHub's anchors).
func TestDocsLinksResolve(t *testing.T) {
	pages := []string{"README.md", "CHANGELOG.md", "deploy/README.md"}
	for _, glob := range []string{"docs/*.md", "docs/*/*.md", "examples/*/README.md"} {
		m, _ := filepath.Glob(glob)
		pages = append(pages, m...)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		a := map[string]bool{}
		b, _ := os.ReadFile(file)
		inCode := false
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "```") {
				inCode = !inCode
			}
			if !inCode && strings.HasPrefix(line, "#") {
				a[slug(strings.TrimLeft(line, "# "))] = true
			}
		}
		anchors[file] = a
		return a
	}
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if os.IsNotExist(err) {
			t.Errorf("%s does not exist", page)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s links to %s, which does not exist", page, target)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[frag] {
				t.Errorf("%s links to %s: %s has no heading with that anchor", page, target, path)
			}
		}
	}
}

// slug is GitHub's anchor for a heading: lower case, punctuation dropped,
// spaces as hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ' || r == '-':
			b.WriteRune('-')
		case r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// The security model's contents-by-topic map names every section, so a
// section added later is placed in a topic, not appended out of sight.
func TestSecurityModelMapNamesEverySection(t *testing.T) {
	b, err := os.ReadFile("docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## Contents by topic")
	if start < 0 {
		t.Fatal("docs/security.md has no contents-by-topic map")
	}
	end := strings.Index(doc[start+3:], "\n## ")
	toc := doc[start : start+3+end]
	for _, line := range strings.Split(doc, "\n") {
		h, ok := strings.CutPrefix(line, "## ")
		if !ok || h == "Contents by topic" || h == "Who we defend against" {
			continue
		}
		if !strings.Contains(toc, "(#"+slug(h)+")") {
			t.Errorf("docs/security.md: section %q is not in the contents-by-topic map", h)
		}
	}
}
