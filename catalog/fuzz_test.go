package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics, and returns either a catalog whose
// lookups agree with its tools or a *LoadError whose problems all lie
// inside the file.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.yaml")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(base + "  - { name: a, description: A., request: { upstream: svc, path: /a } }\n"))
	opts := testOptions()
	authOnly := testOptions()
	authOnly.AuthOnly = true
	f.Fuzz(func(t *testing.T, data []byte) {
		// What tokens read loads whenever the whole catalog does.
		ac, aerr := Parse("f.yaml", data, authOnly)
		c, err := Parse("f.yaml", data, opts)
		if err == nil && (aerr != nil || ac.Auth.Principal.WorkspaceOptional != c.Auth.Principal.WorkspaceOptional) {
			t.Fatalf("AuthOnly Parse = %v, want the auth of a catalog that loads", aerr)
		}
		if err != nil {
			var le *LoadError
			if !errors.As(err, &le) || c != nil {
				t.Fatalf("Parse = %v, %v; want nil and a *LoadError", c, err)
			}
			lines := lineCount(data)
			for _, p := range le.Problems {
				if p.Pos.Line < 0 || p.Pos.Line > lines || p.Pos.Column < 0 || p.File != "f.yaml" || p.Msg == "" {
					t.Fatalf("problem %+v does not fit the file's %d lines", p, lines)
				}
			}
			return
		}
		for _, tool := range c.Tools {
			if !tool.Enabled || c.Tool(tool.Name) != tool || tool.Schema == nil || len(tool.InputJSON) == 0 {
				t.Fatalf("tool %q: enabled=%t lookup=%p schema=%v", tool.Name, tool.Enabled, c.Tool(tool.Name), tool.Schema)
			}
			_ = tool.Schema.Validate(map[string]any{})
		}
	})
}

// FuzzParseSize: never panics; a parsed size is within bounds and
// survives String and back.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"0", "512", "64KiB", "8MiB", "1GiB", "10KB", "12XB", "-1", " 3 MB ", "1025GiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < 0 || n > 1<<40 {
			t.Fatalf("ParseSize(%q) = %d, out of bounds", s, n)
		}
		if back, err := ParseSize(n.String()); err != nil || back != n {
			t.Fatalf("ParseSize(%q) = %d, %v; want %d", n.String(), back, err, n)
		}
	})
}

// FuzzParseDuration: never panics; a parsed duration is non-negative and
// survives String and back.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"10s", "500ms", "1m30s", "0", "-1s", "10", "1h2m3.5s", "9999999999h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("ParseDuration(%q) = %s, negative", s, d)
		}
		if back, err := ParseDuration(d.String()); err != nil || back != d {
			t.Fatalf("ParseDuration(%q) = %s, %v; want %s", d.String(), back, err, d)
		}
	})
}

// FuzzParseTemplate: never panics; placeholder names are valid argument
// names; rendering the parts back (braces doubled) parses to the same parts.
func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{"/v1/jobs/{job_id}", "/v1/jobs/{id}:cancel", "{{literal}}", "a{b}c{d.e-f}", "{", "}", "{}", "{1x}", "x}}y{{z", "{a}{b}", "{now}", "at {now+ttl.unix}", "{now-a.b}", "{now+}", "{now.unix.x}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tpl, err := ParseTemplate(s)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, p := range tpl.Parts {
			if p.Name != "" {
				if tr, isTime, err := ParseTimeRef(p.Name); isTime && (err != nil || p.Time == nil || *p.Time != tr) {
					t.Fatalf("ParseTemplate(%q): placeholder %q is a computed time, part %+v", s, p.Name, p)
				}
				if p.Time == nil && !validArgName(p.Name) {
					t.Fatalf("ParseTemplate(%q): placeholder %q is not a valid name", s, p.Name)
				}
				b.WriteString("{" + p.Name + "}")
				continue
			}
			if p.Text == "" {
				t.Fatalf("ParseTemplate(%q): empty literal part", s)
			}
			b.WriteString(strings.NewReplacer("{", "{{", "}", "}}").Replace(p.Text))
		}
		again, err := ParseTemplate(b.String())
		if err != nil || !equalParts(again.Parts, tpl.Parts) {
			t.Fatalf("ParseTemplate(%q) = %+v, %v; want %+v", b.String(), again.Parts, err, tpl.Parts)
		}
		if name, ok := tpl.Whole(); ok && s != "{"+name+"}" {
			t.Fatalf("ParseTemplate(%q).Whole() = %q, but the text is more than one placeholder", s, name)
		}
	})
}

func equalParts(a, b []Part) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Text != b[i].Text || a[i].Name != b[i].Name || (a[i].Time == nil) != (b[i].Time == nil) ||
			a[i].Time != nil && *a[i].Time != *b[i].Time {
			return false
		}
	}
	return true
}

// FuzzParseTimeOffset: never panics; an accepted duration is within
// (0, MaxTimeOffset].
func FuzzParseTimeOffset(f *testing.F) {
	for _, s := range []string{"2h", "90m", "1d", "1d12h", "366d", "367d", "0s", "-1h", "+1h", "1.5h", "d", "1dd", "99999999999999999999d", "9223372036854775807ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseTimeOffset(s)
		if err == nil && (d <= 0 || d > MaxTimeOffset) {
			t.Fatalf("ParseTimeOffset(%q) = %s, outside (0, %s]", s, d, MaxTimeOffset)
		}
	})
}
