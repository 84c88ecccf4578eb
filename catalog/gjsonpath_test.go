package catalog

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// Paths gjson reads: checkPath must accept every one (most from gjson's
// SYNTAX.md; the rest from real catalogs).
var validPaths = []string{
	// Literals after a pipe; a number literal takes the rest of the path.
	`a|!{"x":1}`, `******s|0|!0.`, `!0.x|@this`,
	"name.last", "age", "children.0", "friends.1.first", "child*.2", "c?ildren.0",
	`fav\.movie`, "friends.#", "friends.#.age",
	`friends.#(last=="Murphy").first`, `friends.#(last=="Murphy")#.first`,
	"friends.#(age>45)#.last", `friends.#(first%"D*").last`, `friends.#(first!%"D*").last`,
	`children.#(!%"*a*")`, `children.#(%"*a*")#`, `friends.#(nets.#(=="fb"))#.first`,
	"vals.#(b==~true)#.a", "vals.#(b==~false)#.a", "vals.#(b==~null)#.a", "vals.#(b==~*)#.a", "vals.#(b!=~*)#.a",
	"friends.0|first", "friends|0|first", "friends|#", `friends.#(last="Murphy")#|0`,
	"children.@reverse", "children.@reverse.0", `@pretty:{"sortKeys":true}`, "@this", "@dig:first",
	`{name.first,age,"the_murphys":friends.#(last="Murphy")#.first}`, "[name.first,age]",
	`{name.first,age,"company":!"Happysoft","employed":!true}`, `!{"a":1}`,
	"..0", "..#.name", "friends.#(last==Murphy).first", `friends.#[last=="Murphy"].first`,
	"@id", "a.@type", "@xmlns:xsi", "a[0]", "data.result.#.metric.__name__",
	"#.{name:labels.alertname,state:status.state}", "data.alerts.#(labels.severity==\"critical\")#",
	`a\|b`, `a\\`, `labels\`, "friends.#(nets.#(==\"fb\")).first", "x.#(y)", "friends.#(age >= 40 )#",
	`friends.#( last == "a)b" ).first`,
	// Escapes and strings inside groups and queries; a simple modifier
	// argument runs to the next "|"; a query may hold another whose
	// operator is not its own.
	`a.#(b=="x\"y")`, `{a\\}`, `!"a\\"`, `a.#(b==\))`, `@dig:a..b`, `a.#(b == ~true)`,
	`a.#(b.#(c==1)==~true)`, `a.#(b=="x)")`, `a.#[b==1]`, `a.#(b==1)x`, `!0..x`, `!-1|..`,
	`a\.`, `a\..b`, `@x:`, `a.@x:`,
}

// Paths that are certainly broken, with the offset checkPath reports.
var brokenPaths = []struct {
	path string
	at   int
	msg  string
}{
	{"data..alerts", 5, "empty component at character 6"},
	{"data.", 4, `ends with "."`},
	{"data|", 4, `ends with "|"`},
	{".data", 0, `starts with "."`},
	{"|data", 0, `starts with "|"`},
	{"..", 1, "ends with"},
	{`#(state=="active"`, 0, "query opened at character 1 is never closed"},
	{`a.#(state=="active`, 11, "string opened at character 12 is never closed"},
	{"a.#()", 2, "query at character 3 is empty"},
	{"a.#( )#", 2, "is empty"},
	{"{a,b", 0, "multipath opened at character 1"},
	{"x.[a,b", 2, "multipath opened at character 3"},
	{`@pretty:{"sortKeys":true`, 8, "modifier argument opened at character 9"},
	{`!{"a":1`, 1, "literal opened at character 2"},
	{"a.#(b==~maybe)", 5, `compares with "~maybe"`},
	{"a.#(b.#(c..d))#", 10, "empty component at character 11"},
	{"a.#(.b==1)", 4, `starts with "."`},
	// Offsets inside queries, groups and strings, and the whole message.
	{`a.#(b=="x`, 7, "the string opened at character 8 is never closed"},
	{`a.#(b.{c)`, 6, "the multipath opened at character 7 is never closed"},
	{`a.#(b.@p:{"x":1)`, 9, "the modifier argument opened at character 10 is never closed"},
	{`a.#(b.#(c=="x))`, 11, "the string opened at character 12 is never closed"},
	{`{a\}`, 0, "the multipath opened at character 1 is never closed"},
	{`!"a\"`, 1, "the string opened at character 2 is never closed"},
	{`@dig:a|b..c`, 9, "it has an empty component at character 10 (two separators in a row)"},
	// A simple argument longer than the modifier's name: the scan resumes
	// at the "|" after it, not before the modifier.
	{`@d:a-long-argument|b..c`, 21, "it has an empty component at character 22 (two separators in a row)"},
	{`a.#(b!=~x)`, 5, `the query at character 3 compares with "~x"; after ~ gjson takes only true, false, null or *`},
	{`a.#(b.#(c==~x)==1)`, 9, `the query at character 7 compares with "~x"; after ~ gjson takes only true, false, null or *`},
	{`x.#(  .b==1)`, 6, `it starts with "." (an empty first component)`},
	{`x.#( a..b==1)`, 7, "it has an empty component at character 8 (two separators in a row)"},
	{`a.{"b:c}`, 3, "the string opened at character 4 is never closed"},
	{`a.#[b==1`, 2, "the query opened at character 3 is never closed"},
	{`a.#(b==1)#.c..d`, 13, "it has an empty component at character 14 (two separators in a row)"},
	{`a.@x:{`, 5, "the modifier argument opened at character 6 is never closed"},
	{`@this:"x`, 6, "the string opened at character 7 is never closed"},
	{`a|!"x`, 3, "the string opened at character 4 is never closed"},
	{`a.!0..x`, 5, "it has an empty component at character 6 (two separators in a row)"},
	{`..a..b`, 4, "it has an empty component at character 5 (two separators in a row)"},
	{`#(a==1)..b`, 8, "it has an empty component at character 9 (two separators in a row)"},
	{`a.#("x)`, 4, "the string opened at character 5 is never closed"},
}

func TestCheckPathAcceptsValidPaths(t *testing.T) {
	for _, p := range validPaths {
		if e := checkPath(p); e != nil {
			t.Errorf("checkPath(%q) = %q at %d, want nil", p, e.msg, e.at)
		}
	}
}

func TestCheckPathRefusesBrokenPaths(t *testing.T) {
	for _, tc := range brokenPaths {
		e := checkPath(tc.path)
		if e != nil && !strings.Contains(e.msg, "never closed") && !strings.Contains(tc.path, "!") {
			// gjson reads an unclosed group to the end; anything else
			// refused must find nothing real.
			for _, doc := range refusalDocs {
				if r := gjson.Get(doc, tc.path); r.Exists() && r.Raw != "[]" {
					t.Errorf("checkPath refuses %q, yet gjson finds %s in %s", tc.path, r.Raw, doc)
				}
			}
		}
		if e == nil || e.at != tc.at || !strings.Contains(e.msg, tc.msg) {
			t.Errorf("checkPath(%q) = %+v, want %q at %d", tc.path, e, tc.msg, tc.at)
		}
	}
	deep := func(n int) string { return strings.Repeat("#(a.", n) + "b" + strings.Repeat(")", n) }
	if e := checkPath(deep(maxQueryNesting)); e != nil {
		t.Errorf("checkPath(%d nested queries) = %+v, want it accepted", maxQueryNesting, e)
	}
	if e := checkPath(deep(maxQueryNesting + 1)); e == nil || e.msg != "it nests queries more than 16 deep" || e.at != 4*(maxQueryNesting+1)-2 {
		t.Errorf("checkPath(%d nested queries) = %+v, want the nesting refused at %d", maxQueryNesting+1, e, 4*(maxQueryNesting+1)-2)
	}
}

// refusalDocs are documents a refused path is tried on: gjson must find
// nothing in any of them, or the refusal threw away a working path. A
// group never closed is exempt: gjson, lenient, may still return a
// fragment, but never what its author meant. The documents hold no
// empty keys: an empty component could address one ("a..b" is a, "", b),
// and checkPath refuses it all the same, as a typo in any real answer.
var refusalDocs = []string{
	`{"name":{"first":"Tom","last":"Anderson"},"age":37,"children":["Sara","Alex","Jack"],"fav.movie":"Deer Hunter","friends":[{"first":"Dale","last":"Murphy","age":44,"nets":["ig","fb","tw"]},{"first":"Roger","last":"Craig","age":68,"nets":["fb","tw"]}]}`,
	`{"data":{"alerts":[{"labels":{"alertname":"Up","severity":"critical"},"status":{"state":"active","silencedBy":[]}}]},"a":{"b":2},"@id":"x"}`,
	`[{"a":1,"b":{"c":[1,2]}},{"a":"x"}]`,
}

func FuzzCheckPath(f *testing.F) {
	for _, p := range validPaths {
		f.Add(p)
	}
	for _, tc := range brokenPaths {
		f.Add(tc.path)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if p == "" || len(p) > 512 {
			return
		}
		e := checkPath(p)
		if e == nil {
			return
		}
		if e.at < 0 || e.at >= len(p) {
			t.Errorf("checkPath(%q) reports offset %d outside the path", p, e.at)
		}
		// No claim that gjson finds nothing for a refused path: gjson
		// tolerates much that no catalog author means ("#...00", "|!00"
		// find something), so such a check would fail on noise. The
		// table tests hold the refusals to the documents instead.
		for _, doc := range refusalDocs {
			gjson.Get(doc, p) // and it must not panic there either
		}
	})
}
