package openapi

import "testing"

// HTML a page shows nothing of goes from a tag's description, and only
// that: an element whose name starts with "style" or "script" is
// neither, and hides nothing.
func TestPlainWordsHidesOnlyStylesAndScripts(t *testing.T) {
	for in, want := range map[string]string{
		"<style>h1 { margin: 0 }</style> Envelopes send documents.": "Envelopes send documents.",
		"<STYLE type=text/css>p{}</STYLE > Envelopes.":              "Envelopes.",
		"<script>alert(1)</script>Envelopes.":                       "Envelopes.",
		"Envelopes. <style":                                         "Envelopes.",
		"Envelopes. <script src=x.js> and the rest":                 "Envelopes.",
		"See the <style-guide> element for headings.":               "See the element for headings.",
		"A <scripts-list> holds the pipeline's scripts.":            "A holds the pipeline's scripts.",
		"Load it with <script-loader> and go.":                      "Load it with and go.",
		"Upload <stylesheet> files as assets.":                      "Upload files as assets.",
	} {
		if got := plainWords(in); got != want {
			t.Errorf("plainWords(%q) = %q, want %q", in, got, want)
		}
	}
}
