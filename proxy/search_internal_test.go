package proxy

import (
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpgw/gateway/catalog"
)

func TestWithoutValuesDropsQuotedIdentifiers(t *testing.T) {
	for _, c := range []struct{ query, want string }{
		{"balance of addr1qx2fxv2umyhttkxyxp8x0dl", "balance of addr"},
		{"pool pool1pu5jlj4q9w9jlx, please", "pool pool, please"},
		{"run 3fa85f64-5717-4562-b3fc-2c963f66afa6", "run "},
		{"tx 8f3ce2a90b7d41c6", "tx "},
		{"show override 7f3k2 and a1b2c", "show override  and "},
		{"show commit 3f4add9e2c1b", "show commit "},
		{"refund cus_9a8b7c6d5e4f now", "refund cus now"},
		// The prefix is counted in letters, not bytes.
		{"ééé1a2b3c4d éé1a2b3c4d", "ééé "},
		// Hyphens and underscores join a run only between its characters.
		{"sign-in -- read_only x2y3z4w5v6-", "sign-in -- read_only -"},
		// Words that only look like codes stay: a version, a digit or two.
		{"oauth2 sha256 base64 ipv4 k8s e2e", "oauth2 sha256 base64 ipv4 k8s e2e"},
		{"i18n w3c x1y2 e2e4 u2f p4d", "i18n w3c x1y2 e2e4 u2f p4d"},
		{"job 42 of run 2024", "job 42 of run 2024"},
		// A tracker's key names an issue, its letters a project, not a
		// word asked for.
		{"subscribe me to BILL-230 and OPS-1423", "subscribe me to issue and issue"},
		{"Move DEV-52 to Done", "Move issue to Done"},
		{"the product SKU-22 and chargeback DP-3", "the product  and chargeback "},
		{"hash it with SHA-256 in UTF-8", "hash it with SHA-256 in UTF-8"},
		// A span of time is no value, however long (withoutDurations).
		{"log 2h30m, 1h and 120h45min, not 4gb", "log 2h30m, 1h and 120h45min, not 4gb"},
		{"sign-in Bill-230 AB-CD-12 A-12 ABC-12x", "sign-in Bill-230 AB-CD-12 A-12 ABC-12x"},
		// An e-mail address names a user; a domain alone, or an @ without
		// a domain, stays.
		{"invite jane.doe+web@mail.example.com, now", "invite user, now"},
		{"to a@b.io.", "to user."},
		{"emails ending in @contractor.example.com", "emails ending in @contractor.example.com"},
		{"mention @octocat or x@localhost", "mention @octocat or x@localhost"},
		// An address may hold letters beyond ASCII (RFC 6531): it is
		// replaced whole, not from its first ASCII letter on.
		{"invite müller@firma.de", "invite user"},
		{"add josé@example.com", "add user"},
		{"mail δοκιμή@παράδειγμα.δοκιμή", "mail user"},
		// A package at a version is no address: no top-level domain is
		// all digits.
		{"upgrade lodash@4.17.21 and python@3.12", "upgrade lodash@4.17.21 and python@3.12"},
		{"", ""},
	} {
		if got := withoutValues(c.query); got != c.want {
			t.Errorf("withoutValues(%q) = %q, want %q", c.query, got, c.want)
		}
	}
}

func TestAboutOne(t *testing.T) {
	for query, want := range map[string]bool{
		"what is the pledge of this pool":       true,
		"cancel job 42":                         true,
		"rerun run #17":                         true,
		"balance of addr1qx2fxv2umyhttkxyxp8x0": true,
		"the runs that failed":                  false,
		"what is running on our ec2 instances":  false,
		"oauth2 clients":                        false,
		"the last 10 deploys":                   false,
		"deploys in 2024":                       false,
		// Nor does a span of time (withoutDurations reads it later).
		"deploys in the past 24h":         false,
		"the builds that took over 45min": false,
		"log 120h45min of work":           false,
		"log 2h30m against DEV-52":        true,
		"42":                              false,
		"":                                false,
	} {
		if got := aboutOne(query, withoutValues(query)); got != want {
			t.Errorf("aboutOne(%q) = %v, want %v", query, got, want)
		}
	}
}

// A span of time asks about time.
// wantRewrite checks that rewrite, called name, turns in into want.
func wantRewrite(t *testing.T, name string, rewrite func(string) string, in, want string) {
	t.Helper()
	if got := rewrite(in); got != want {
		t.Errorf("%s(%q) = %q, want %q", name, in, got, want)
	}
}

func TestWithoutDurations(t *testing.T) {
	for in, want := range map[string]string{
		"log 2h30m, 1h and 45min, not 4gb or 7d": "log time, time and time, not 4gb or 7d",
		"3hrs 10mins 120h45min":                  "time time time",
		"h264 2h-x 2H x2h 2h30":                  "h264 2h-x 2H x2h 2h30",
		// After "every" it says how often, which "every time" does not.
		"back up the db every 6h, Each 30min or every: 1h; not over 2h": "back up the db every 6h, Each 30min or every: 1h; not over time",
		"everyday 2h, évery 2h": "everyday time, évery time",
	} {
		wantRewrite(t, "withoutDurations", withoutDurations, in, want)
	}
	// "Every 6h" asks for no webhook, as "every time a push lands" does.
	for _, query := range []string{"back up the db every 6h and keep 7 copies", "restart the worker every 30min if it is stuck"} {
		q := SearchQuery{Query: query}
		if err := q.check(); err != nil {
			t.Fatal(err)
		}
		if _, ok := q.terms[stem("webhook")]; ok {
			t.Errorf("%q asks for a webhook: %v", query, q.terms)
		}
	}
}

func FuzzWithoutValues(f *testing.F) {
	for _, s := range []string{"OPS-1423 x-AB-12 AB-12-", "balance of addr1qx2fxv2umyhttkxyxp8x0dl", "run 3fa85f64-5717", "oauth2 k8s", "é1é2é3é4é", "٤a٤a٤a٤a", "a@b.c@d.e", "٤a٤a@x.yz", "a@xyz_é1a2b3c4d5.co", "DNS for mysite.io.", "https://app.example.com/x", "é.com b.é.io", "-a.com a-.org ..com", "AA-0", "AB-1,CD-2 EF-3", "1h 2h30m every 6h", "see ./docs/a.md.txtx (b.GO) 'c d.Pdf' e.g. it.Go", "+12345678 (+1 415 555 0199) 312-555-0142,1 +4420\u00a07946 0958", "7f3k2 a1b2c i18n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		if !utf8.ValidString(query) {
			return // Search refuses it before this runs
		}
		// A value is dropped and an address is longer than "user", but
		// a tracker's key may be a byte shorter than "issue" (AB-1): at
		// most one byte more for each five of the query.
		got := withoutValues(query)
		if len(got) > len(query)+len(query)/4 || !utf8.ValidString(got) {
			t.Fatalf("withoutValues(%q) = %q: longer or not UTF-8", query, got)
		}
		if again := withoutValues(got); again != got {
			t.Fatalf("withoutValues is not idempotent on %q: %q then %q", query, got, again)
		}
		host := withoutHostnames(got)
		if !utf8.ValidString(host) || withoutHostnames(host) != host {
			t.Fatalf("withoutHostnames(%q) = %q: not UTF-8 or not idempotent", got, host)
		}
		files := withoutFilenames(host)
		if !utf8.ValidString(files) || withoutFilenames(files) != files {
			t.Fatalf("withoutFilenames(%q) = %q: not UTF-8 or not idempotent", host, files)
		}
		phones := withoutPhones(query)
		if !utf8.ValidString(phones) || withoutPhones(phones) != phones || len(phones) > len(query)+len(query)/4 {
			t.Fatalf("withoutPhones(%q) = %q: not UTF-8, not idempotent or longer", query, phones)
		}
		spans := withoutDurations(got)
		if !utf8.ValidString(spans) || withoutDurations(spans) != spans || withoutValues(spans) != spans {
			t.Fatalf("withoutDurations(%q) = %q: not UTF-8, not idempotent or holds a value", got, spans)
		}
	})
}

// A host name on its own is a domain; a file name, a version, an address
// or a URL is not.
func TestWithoutHostnames(t *testing.T) {
	for in, want := range map[string]string{
		"Start hosting the DNS for mysite.io here":   "Start hosting the DNS for domain here",
		"a certificate for shop.example.com.":        "a certificate for domain.",
		"point www.example.com at the load balancer": "point domain at the load balancer",
		"(db.internal)":                             "(domain)",
		"import spec.yaml and openapi.json":         "import spec.yaml and openapi.json",
		"run deploy.sh then main.py":                "run deploy.sh then main.py",
		"upgrade to 1.2.3 or v2.0":                  "upgrade to 1.2.3 or v2.0",
		"call https://hooks.example.com/asana":      "call https://hooks.example.com/asana",
		"example.com/path":                          "example.com/path",
		"user@example.com":                          "user@example.com",
		"naïve.com and -bad.com and bad-.com":       "naïve.com and -bad.com and bad-.com",
		"@................ and ...":                 "@................ and ...",
		"deploy an ASP.NET app from Dockerfile.dev": "deploy an ASP.NET app from Dockerfile.dev",
		"Disable the flag.It is broken":             "Disable the flag.It is broken",
		"read the user.info field of makefile.in":   "read the user.info field of makefile.in",
	} {
		wantRewrite(t, "withoutHostnames", withoutHostnames, in, want)
	}
}

func TestWithoutChannelsReadsAChannelNameAsChannel(t *testing.T) {
	for in, want := range map[string]string{
		"post the summary in #releases":       "post the summary in #channel",
		"add Mei to #design-review, and #ops": "add Mei to #channel, and #channel",
		"#general is too noisy":               "#channel is too noisy",
		"(#all-company)":                      "(#channel)",
		"post it in #channel":                 "post it in #channel",
		"close 142 and run 17":                "close 142 and run 17",
		"a C# client and an F#-style one":     "a C# client and an F#-style one",
		"the issue#tracker field":             "the issue#tracker field",
		"## heading":                          "## heading",
		"tagged #" + "2024":                   "tagged #" + "2024", // a number, written with a hash
		"set the label colour to #ff0000":     "set the label colour to #ff0000",
		"#a1b2c3 or #f00, not #fed":           "#a1b2c3 or #f00, not #channel",
		"see #L42 of main.go":                 "see #L42 of main.go",
	} {
		wantRewrite(t, "withoutChannels", func(q string) string { out, _ := withoutChannels(q); return out }, in, want)
	}
	for query, one := range map[string]bool{
		"archive #project-phoenix": true,
		"post it in #channel":      true,
		"archive the projects":     false,
		"paint it #ff0000":         false,
	} {
		q := SearchQuery{Query: query}
		if err := q.check(); err != nil {
			t.Fatal(err)
		}
		if q.one != one {
			t.Errorf("%q points at one thing: %v, want %v", query, q.one, one)
		}
	}
}

// The collection a path ends in is its last word when that is a plural,
// whatever format, RPC method or key follows it.
func TestCollectionTerm(t *testing.T) {
	for path, want := range map[string]string{
		"/projects":                   stem("projects"),
		"/projects/":                  stem("projects"),
		"/projects/{id}/endpoints":    stem("endpoints"),
		"/api/v2/tickets.json":        stem("tickets"),
		"/conversations.list":         stem("conversations"),
		"/items:batchGet":             stem("items"),
		"/search?type=users":          "",
		"/projects/{id}":              "",
		"/lists/{idList}/board":       "",
		"/v1":                         "",
		"/status":                     "",
		"":                            "",
		"/":                           "",
		"/{a}.json":                   "",
		"/users/{id}/ssh_keys":        stem("keys"),
		"/repos/{owner}/{repo}/pulls": stem("pulls"),
	} {
		if got := collectionTerm(path); got != want {
			t.Errorf("collectionTerm(%q) = %q, want %q", path, got, want)
		}
	}
	for w, want := range map[string]bool{"projects": true, "boards": true, "repos": true, "status": false, "access": false,
		"analysis": false, "always": false, "news": false, "https": false, "series": false, "bus": false, "project": false} {
		if got := plural(w, stem(w)); got != want {
			t.Errorf("plural(%q) = %v, want %v", w, got, want)
		}
	}
}

func TestWithoutPhones(t *testing.T) {
	for in, want := range map[string]string{
		"release +1 415 555 0199, please":            "release phone number, please",
		"is +44 20 7946 0958 a landline?":            "is phone number a landline?",
		"who has (312) 555-0142?":                    "who has phone number?",
		"give kim the line 312-555-0142":             "give kim the line phone number",
		"+15551234567 is whose number":               "phone number is whose number",
		"text a code to +1 512 555 0100":             "text a code to +1 512 555 0100",
		"ring +14155550100, then fax (312) 555-0142": "ring +14155550100, then fax (312) 555-0142",
		"text +15551234567 from +15557654321":        "text +15551234567 from +15557654321",
		// Dates, versions, short numbers and longer ids are none.
		"deploys since 2024-03-15":         "deploys since 2024-03-15",
		"upgrade to 1.2.3":                 "upgrade to 1.2.3",
		"+1 to that, 12 + 3":               "+1 to that, 12 + 3",
		"order 123-456-7890-1234":          "order 123-456-7890-1234",
		"card +1 2345 6789 0123 4567 8901": "card +1 2345 6789 0123 4567 8901",
		"+12345678 and +100000000":         "+12345678 and +100000000",
		"since +2024-03-15":                "since +2024-03-15",
		"pay +12.345.678,00 EUR":           "pay +12.345.678,00 EUR",
		"pay +1 234 567 890,00 EUR":        "pay +1 234 567 890,00 EUR",
		"release +1 415 555 0199 2 times":  "release phone number 2 times",
		"who owns (+44 20 7946 0958)?":     "who owns (phone number)?",
		"who owns\u00a0+44 20 7946 0958":   "who owns\u00a0phone number",
	} {
		wantRewrite(t, "withoutPhones", withoutPhones, in, want)
	}
}

func TestWithoutFilenames(t *testing.T) {
	for in, want := range map[string]string{
		"show me what's in config/app.yaml on main": "show me what's in file on main",
		"the README.md, please":                     "the file, please",
		"(src/config/settings.py)":                  "(file)",
		"run deploy.sh then main.py":                "run file then file",
		"fetch /reports/2024-03/summary.csv":        "fetch file",
		"tail ~/app.log, ./out.txt and ../a/b.md":   "tail file, file and file",
		"edit `config/app.yaml`, a.md,b.md; c.txt":  "edit `file`, file,file; file",
		"upload 'Q3 report.pdf'":                    "upload 'Q3 file'",
		"deploy a node.js app from Dockerfile.dev":  "deploy a node.js app from Dockerfile.dev",
		"upgrade to 1.2.3 or v2.0":                  "upgrade to 1.2.3 or v2.0",
		"fetch https://example.com/openapi.yaml":    "fetch https://example.com/openapi.yaml",
		"the yaml and the .md":                      "the yaml and the .md",
		"no dots here":                              "no dots here",
		// An extension in capitals is one; a capitalised word after a
		// dot starts a sentence.
		"attach SCAN.PDF and Photo.JPG":             "attach file and file",
		"Do it.Go to settings":                      "Do it.Go to settings",
		"the build fails at step 3.Log in to check": "the build fails at step 3.Log in to check",
	} {
		wantRewrite(t, "withoutFilenames", withoutFilenames, in, want)
	}
}

// A number on its own is a value; one written into a word names what the
// word names.
func TestQueryTermsNumbers(t *testing.T) {
	for query, want := range map[string]map[string]bool{
		"close bug 5512, it's fixed in 2.4":  {"5512": false, "2": false, "4": false},
		"cut hotfix off release-2.3 at v2.1": {"2": false, "3": false, "1": false},
		"oauth2 clients and s3 buckets":      {"2": true, "3": true},
		"enable 2fa":                         {"2fa": true},
		"register the H.323 room system":     {"323": true},
		"ipv6 ranges":                        {"6": true},
		"v.2 and nav2":                       {"2": true},
		"v.3 or .4 builds":                   {"3": false, "4": false},
		"sha-256 and gpt-4":                  {"256": true, "4": true},
		"5512":                               {"5512": true},
		"2024 and 2025?":                     {"2024": true, "2025": true},
		"release-2.3 and node-18.1":          {"2": false, "18": false},
	} {
		terms := queryTerms(query, false)
		for term, in := range want {
			if _, got := terms[term]; got != in {
				t.Errorf("queryTerms(%q) has %q: %v, want %v (%v)", query, term, got, in, terms)
			}
		}
	}
}

// Words that pad a request ask for nothing: "currently" is no current
// user (derived would reach "current", a word of the caller's own
// endpoints), "already" and "still" are no words of a description.
func TestQueryTermsPassOverFillerWords(t *testing.T) {
	for query, want := range map[string][]string{
		"which jobs are currently running":                          {"job", stem("running")},
		"void the envelope that's already out, we still need to":    {"void", "envelop"},
		"I actually just want to see the invoices, maybe the stuff": {"invoic", "see"},
		"is it done yet? I don't want it anymore":                   {stem("done")},
	} {
		terms := queryTerms(query, false)
		var own []string
		for t, q := range terms {
			if q.own {
				own = append(own, t)
			}
		}
		slices.Sort(own)
		w := slices.Sorted(slices.Values(want))
		if !slices.Equal(own, w) {
			t.Errorf("queryTerms(%q) own words %v, want %v", query, own, w)
		}
	}
}

// A word's plural and its singular meet, whatever the singular ends in.
func TestStemMeetsPlurals(t *testing.T) {
	for _, pair := range [][2]string{{"alias", "aliases"}, {"canvas", "canvases"}, {"bias", "biases"}, {"status", "statuses"},
		{"idea", "ideas"}, {"quota", "quotas"}, {"policy", "policies"}, {"address", "addresses"}, {"PR", "PRs"}, {"ip", "ips"},
		{"menu", "menus"}, {"SKU", "SKUs"}, {"cpu", "cpus"}, {"uri", "uris"}, {"emoji", "emojis"}, {"cookie", "cookies"}} {
		if a, b := stem(strings.ToLower(pair[0])), stem(strings.ToLower(pair[1])); a != b {
			t.Errorf("stem(%q) = %q, stem(%q) = %q: they should meet", pair[0], a, pair[1], b)
		}
	}
}

// An acronym's plural is the acronym, and in lower case a two-letter
// one's stem drops its s. ("IPsec" is read as HTTPServer is: one
// capital run before a lower-case word.)
func TestAcronymPlurals(t *testing.T) {
	for in, want := range map[string]string{
		"getIPs":             "get ip",
		"listAPIs":           "list api",
		"the open PRs":       "the open pr",
		"userIDsByName":      "user id by nam",
		"HTTPServer":         "http server",
		"IPsec tunnels":      "i psec tunnel",
		"get_i_ps":           "get i ps",
		"VMs and URLs":       "vm and url",
		"SKUs, GUIs and CIs": "sku gui and ci",
		"LIST_APIS":          "list api",
		"getAPIsByID":        "get api by id",
		"the prs":            "the pr",
	} {
		if got := strings.Join(stemAll(words(in)), " "); got != want {
			t.Errorf("stemAll(words(%q)) = %q, want %q", in, got, want)
		}
	}
}

// A phrasal verb asks for what it stands for, though its first word
// alone reads: "get rid of" deletes, "get it back" restores.
func TestQueryIntentOfPhrasalVerbs(t *testing.T) {
	wantIntents(t, map[string]intent{
		"get rid of that task":      intentWrite,
		"get the custom field back": intentWrite,
		"spin up a cluster":         intentWrite,
		"look up a user":            intentRead,
		"get the token of this app": intentRead,
		"get the runner":            intentRead,
		"sign the user out":         intentWrite,
		// Asking to be told sets something up; asking what tells reads.
		"email me when the disk is full":             intentWrite,
		"watch the site and let us know if it fails": intentWrite,
		"which alerts email me when a job fails?":    intentRead,
		"tell me when the last backup ran":           intentRead,
		"tell me when the site goes down":            intentWrite,
		"tell me which jobs failed":                  intentRead,
		// A credential one gets may be new or may exist.
		"get a new API key":       intentWrite,
		"get another deploy key":  intentWrite,
		"get me a new API token":  intentWrite,
		"get a deploy key":        intentNone,
		"get a repository secret": intentNone,
	})
}

// register meets registration, but integer does not meet integration.
func TestDerivedStrationOnly(t *testing.T) {
	for term, want := range map[string]string{"register": "registration", "registration": "register", "administer": "administration",
		"recently": "recent", "permanently": "permanent"} {
		if !slices.Contains(derived(stem(term)), want) {
			t.Errorf("derived(%q) = %v, want %s in it", term, derived(stem(term)), want)
		}
	}
	for term, not := range map[string]string{"integer": "integration", "integration": "integer", "apply": "app", "reply": "rep", "early": "ear"} {
		if slices.Contains(derived(stem(term)), not) {
			t.Errorf("derived(%q) = %v, want no %s", term, derived(stem(term)), not)
		}
	}
}

// "to-do" is a word only where it stands alone: "door-to-door" and
// "auto-download" keep their words.
func TestQueryTermsToDo(t *testing.T) {
	for query, want := range map[string]bool{
		"create a to-do":          true,
		"my TO-DOs":               true,
		"(To-Do)":                 true,
		"door-to-door delivery":   false,
		"auto-download artifacts": false,
	} {
		terms := queryTerms(query, false)
		if _, got := terms["todo"]; got != want {
			t.Errorf("queryTerms(%q) has todo: %v, want %v (%v)", query, got, want, terms)
		}
	}
	if _, ok := queryTerms("auto-download artifacts", false)["download"]; !ok {
		t.Errorf(`queryTerms("auto-download artifacts") lost "download"`)
	}
}

// A phrasal verb is found in its -ed and -ing forms, but not in a plural
// noun ("logs in production" is no "log in"), and one whose first word
// is a stop word only when its words stand together.
func TestPhrasesInTheirForms(t *testing.T) {
	for query, want := range map[string]struct {
		has  string
		hasn string
	}{
		"signed up for the webinar":         {stem("register"), ""},
		"taking out the old runners":        {stem("remove"), ""},
		"setting up a webhook":              {stem("create"), ""},
		"show the error logs in production": {stem("log"), stem("login")},
		"retry the webhook at most once":    {"", stem("batch")},
		"register them at once":             {stem("batch"), ""},
		"send an e-mail to the team":        {"mail", ""},
		"the new-checkout flag":             {"checkout", ""},
	} {
		terms := queryTerms(query, false)
		if want.has != "" {
			if _, ok := terms[want.has]; !ok {
				t.Errorf("queryTerms(%q) lacks %q: %v", query, want.has, terms)
			}
		}
		if _, ok := terms[want.hasn]; want.hasn != "" && ok {
			t.Errorf("queryTerms(%q) has %q: %v", query, want.hasn, terms)
		}
	}
	// A compound of a prefix is a word; a name's words count less.
	if got := queryTerms("send an e-mail", false)["mail"].w; got != 1 {
		t.Errorf(`"e-mail" weighs %v, want 1`, got)
	}
	if got := queryTerms("the new-checkout flag", false)["checkout"].w; got != weightNamed {
		t.Errorf(`"new-checkout" weighs %v, want %v`, got, weightNamed)
	}
}

// Quoted text is a name's; an apostrophe quotes nothing.
func TestSplitQuoted(t *testing.T) {
	for text, want := range map[string]string{
		"put 'update changelog' on the checklist": "update changelog",
		`rename "Road map" to “New plan”`:         "road map new plan",
		"it's John's card, isn't it":              "",
		"the users' keys and 'the rest'":          "the rest",
		"‘smart’ quotes, don’t":                   "smart",
		"an 'open quote never closes":             "",
		`a "dangling one`:                         "",
	} {
		quoted, rest := splitQuoted(text)
		if got := strings.Join(words(quoted), " "); got != want {
			t.Errorf("splitQuoted(%q) quoted %q (words %q), want words %q", text, quoted, got, want)
		}
		all := append(words(quoted), words(rest)...)
		if whole := words(text); !sameWords(all, whole) {
			t.Errorf("splitQuoted(%q) = %q, %q: words %v, want those of the text %v", text, quoted, rest, all, whole)
		}
	}
	if named := namedWords("put 'update changelog' on the checklist"); !named["update"] || named["checklist"] {
		t.Errorf("namedWords of a quoted name = %v, want its words only", named)
	}
	if named := namedWords("update 'update notes'"); named["update"] {
		t.Errorf("namedWords counts a word the query also says plainly: %v", named)
	}
}

func sameWords(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func FuzzSplitQuoted(f *testing.F) {
	for _, s := range []string{"put 'a b' on", `"x" “y” ‘z’`, "it's", "'", `"`, "“", "‘’", "a'b'c", "x '' y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			return // Search refuses it before this runs
		}
		quoted, rest := splitQuoted(text)
		if !utf8.ValidString(quoted) || !utf8.ValidString(rest) {
			t.Fatalf("splitQuoted(%q) = %q, %q: not UTF-8", text, quoted, rest)
		}
		if all, whole := append(words(quoted), words(rest)...), words(text); !sameWords(all, whole) {
			t.Fatalf("splitQuoted(%q) = %q, %q: words %v, want those of the text %v", text, quoted, rest, all, whole)
		}
	})
}

// Whatever the query, reading it ends, and gives terms of positive,
// finite weight, none empty.
func FuzzSearchQueryCheck(f *testing.F) {
	for _, s := range []string{"make bob an admin", "ping us whenever it's down", "put 'a' on \"b\"", "take me off every time", "make the the the a", "whenever whenever", "“", "get a new token", "email me when", "who joined", "file a bug: it fails", "leave a comment on PR 1: looks fine", "the file a: b", ": :", "cut an: ", "InTo file a bug", "please FiLe a bug", "post to #general and (#ops), not #ff0000 or #L42", "## #", "we don't need it anymore, release it", "not, never. don't!", "v1.2, not v1.3", "who am I logged in as?", "which account is this API token for"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		q := SearchQuery{Query: query}
		if err := q.check(); err != nil {
			return
		}
		for term, w := range q.terms {
			if term == "" || !(w.w > 0) || math.IsInf(w.w, 0) || !utf8.ValidString(term) {
				t.Fatalf("query %q gives term %q weight %v", query, term, w.w)
			}
		}
		// A negator's clause ends after it and within the words.
		ws := words(query)
		ends := clauseEnds(query)
		if len(ends) != len(ws) {
			t.Fatalf("clauseEnds(%q) has %d ends for %d words", query, len(ends), len(ws))
		}
		for i, e := range ends {
			if e <= i || e > len(ws) || i > 0 && e < ends[i-1] {
				t.Fatalf("clauseEnds(%q) = %v: word %d ends at %d", query, ends, i, e)
			}
		}
		// makesLeading's index is that of its verb among the words
		// queryTerms reads.
		if i := makesLeading(query); i >= 0 {
			verb := false
			if i < len(ws) {
				_, verb = makesWith[ws[i]]
			}
			if !verb {
				t.Fatalf("makesLeading(%q) = %d, but its words are %q", query, i, ws)
			}
		}
	})
}

// BenchmarkQueryTermsManyMakes reads a query of nothing but "make": what
// "make" turns into is read of the whole query once, not once a "make"
// (which took 130 times as long as a query of "bake").
func BenchmarkQueryTermsManyMakes(b *testing.B) {
	query := strings.Repeat("make ", MaxSearchQuery/5)
	for b.Loop() {
		queryTerms(query, false)
	}
}

// "Make" turns one thing into another ("make bob an admin", "make the
// board private"), but "make me a new key" makes one for someone, "make
// two private boards" counts what it makes and "make backups of a
// database" makes them of another.
func TestTurnsInto(t *testing.T) {
	for text, want := range map[string]bool{
		"make bob an admin":                    true,
		"make bob a team admin":                true,
		"make Zoë an admin":                    true,
		"make José the owner":                  true,
		"make the roadmap board private":       true,
		"make main the default branch":         true,
		"make two boards private":              true,
		"make a new private board":             false,
		"make sure the backup ran":             false,
		"make me a new API key":                false,
		"make the team a new channel":          false,
		"make two private boards":              false,
		"make 3 private repos for the interns": false,
		"make backups of a database":           false,
		"make copies of a card":                false,
	} {
		if got := turnsInto(text); got != want {
			t.Errorf("turnsInto(%q) = %v, want %v", text, got, want)
		}
	}
}

// "Whenever" and "every time" ask for something each time something
// happens, but not where the time is a thing or a time to come, in "at
// any time", nor in an order to read what happened.
func TestOnEachEvent(t *testing.T) {
	for query, want := range map[string]bool{
		"ping our chat whenever someone pushes":          true,
		"call our bot every time a push lands":           true,
		"post to the chat each time a deploy fails":      true,
		"restart the worker any time it crashes":         true,
		"get notified whenever a deploy fails":           true,
		"get a message every time someone pushes":        true,
		"every time entry for the Acme project":          false,
		"approve any time off requests from Bob":         false,
		"book a meeting with Ana any time next week":     false,
		"let customers cancel at any time":               false,
		"show me every time the deploy failed this week": false,
		"list the tests that fail every time":            false,
		"look up each time the certificate was rotated":  false,
		"run the backup every time":                      false,
	} {
		if got := onEachEvent(words(query)); got != want {
			t.Errorf("onEachEvent(%q) = %v, want %v", query, got, want)
		}
	}
}

// A generic record word is a segment of its own, with or without a
// format or a method after it; inside a compound it is not.
func TestHoldsRecords(t *testing.T) {
	for path, want := range map[string]bool{
		"/items/{collection}":            true,
		"/folders/{id}/items":            true,
		"/lists/{list_id}/items.json":    true,
		"/v1/items:batchGet":             true,
		"/cards/{id_card}/checkItem/{x}": false,
		"/lists/{list_id}.json":          false,
		"/time_entries":                  false,
	} {
		if got := holdsRecords(path); got != want {
			t.Errorf("holdsRecords(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestMakesLeadingAndWhatIsSaid(t *testing.T) {
	for q, want := range map[string]int{
		"file a bug":                  0,
		"please file an issue for it": 1,
		"cut a new release":           0,
		"the file a user sent":        -1,
		"file the report":             -1,
		"leave the team":              -1,
		"":                            -1,
		// Leave and raise make only some things.
		"leave a team":       -1,
		"leave a quick note": 0,
		"raise a ticket":     0,
		"raise a quota":      -1,
		// The index is among words(query), which parts "InTo" in two
		// and "FiLe" too (no verb there).
		"InTo file a bug":   2,
		"please FiLe a bug": -1,
		"INto file a bug":   2,
		// A phrasal verb says what it does.
		"log a user out":  -1,
		"log an admin in": -1,
		"log a defect":    0,
	} {
		if got := makesLeading(q); got != want {
			t.Errorf("makesLeading(%q) = %d, want %d", q, got, want)
		}
	}
	for _, c := range []struct{ text, said string }{
		{"leave a comment on PR 17: looks fine", "looks fine"},
		{"file a bug: login throws a 500", "login throws a 500"},
		{"reply to the review: fixed in the next commit", "fixed in the next commit"},
		{"GDPR request: erase the customer", ""},
		{"sign dave out everywhere: end his sessions", ""},
		{"note: the deploy failed", ""},
	} {
		said, _, ok := whatIsSaid(c.text)
		if ok != (c.said != "") || said != c.said {
			t.Errorf("whatIsSaid(%q) = %q, %v; want %q", c.text, said, ok, c.said)
		}
	}
}

// A changing verb followed by "of" is its noun: "end of month invoices"
// orders nothing, "end the meeting" does, and a list is read either way.
func TestLeadingVerbOfANoun(t *testing.T) {
	wantIntents(t, map[string]intent{
		"end the meeting for everyone": intentWrite,
		"end of month invoices":        intentNone,
		"list of open runs":            intentRead,
		"list the open runs":           intentRead,
	})
}

// The tools that say who the caller is, read from the route alone.
func TestSelfTool(t *testing.T) {
	for path, want := range map[string]uint8{
		"/users/me":                            2,
		"/api/v3/core/users/me/":               2,
		"/members/me":                          2,
		"/me":                                  2,
		"/rest/api/3/myself":                   2,
		"/user":                                1,
		"/v3/user.json":                        1,
		"/api/v1/user":                         1,
		"/v2/account":                          1,
		"/2010-04-01/user/profile":             1,
		"/profile":                             1,
		"/users/current":                       2,
		"/userinfo":                            2,
		"/oauth2/v1/userinfo":                  2,
		"/api/v1/accounts/verify_credentials":  2,
		"/1.1/account/verify_credentials.json": 2,
		"/api/v1/apps/verify_credentials":      0, // the app's own
		"/current":                             0,
		"/self":                                0,
		"/v1/current.json":                     0, // the current weather
		"/permissions/me":                      0, // my permissions
		"/api/v3/core/brands/current":          0,
		"/api/v1/meta/types/user":              0,
		"/users":                               0,
		"/user/keys":                           0,
		"/users/{id}":                          0,
		"/accounts/{sid}/account":              0,
	} {
		d := &catalog.Tool{Request: catalog.Request{Method: "GET", Path: path}}
		if got := selfTool(d); got != want {
			t.Errorf("selfTool(GET %s) = %d, want %d", path, got, want)
		}
	}
	write := &catalog.Tool{Request: catalog.Request{Method: "PATCH", Path: "/user"}}
	required := &catalog.Tool{Request: catalog.Request{Method: "GET", Path: "/user"}, Input: map[string]any{"required": []any{"accountId"}}}
	if selfTool(write) != 0 || selfTool(required) != 0 {
		t.Error("a write, or a read that needs an argument, is taken as telling the caller who they are")
	}
	// A key that may be "me", as its argument says.
	byKey := func(path, desc string, required ...any) *catalog.Tool {
		return &catalog.Tool{Request: catalog.Request{Method: "GET", Path: path}, Input: map[string]any{
			"properties": map[string]any{"user_gid": map[string]any{"type": "string", "description": desc}, "opt_fields": map[string]any{"type": "string"}},
			"required":   required,
		}}
	}
	for _, c := range []struct {
		tool *catalog.Tool
		want uint8
	}{
		{byKey("/users/{user_gid}", `A string identifying a user: the string "me", an email, or a gid.`, "user_gid"), 1},
		{byKey("/users/{user_gid}", "For user-level apps, pass `me` as the value.", "user_gid"), 1},
		{byKey("/users/{user_gid}", "The gid of the user.", "user_gid"), 0},
		{byKey("/users/{user_gid}", "Tell me which user.", "user_gid"), 0},
		{byKey("/users/{user_gid}/tasks", `The string "me" or a gid.`, "user_gid"), 0},
		{byKey("/users/{user_gid}", `The string "me" or a gid.`, "user_gid", "opt_fields"), 0},
	} {
		if got := selfTool(c.tool); got != c.want {
			t.Errorf("selfTool(GET %s, %q) = %d, want %d", c.tool.Request.Path, c.tool.Input["properties"].(map[string]any)["user_gid"].(map[string]any)["description"], got, c.want)
		}
	}
}

func TestAsksWhoAmI(t *testing.T) {
	for query, want := range map[string]bool{
		"who am I?":              true,
		"whoami":                 true,
		"who am I logged in as?": true,
		"Which account is this API token logged in as?": true,
		"which account is this token for?":              true,
		"which user does this API key belong to?":       true,
		"whose token is this?":                          false, // no "this token": whose is asked of what follows
		"whose is this access token?":                   true,
		"which keys does this user have?":               false,
		"which user owns this deploy key?":              false,
		"rotate my token":                               false,
		"list the tokens of my account":                 false,
		"who is on the team?":                           false,
		"what am I logged in as?":                       true,
		"which account am I logged in with?":            true,
		"log the deploy in with the others":             false,
		"who am I logged in as right now":               true,
		`find the song "Who Am I"`:                      false,
		"who am I following?":                           false,
		"who am I meeting with tomorrow?":               false,
		"users logged in as admin in the last day":      false,
		"which users signed in as guest":                false,
		"what is the api key of user bob?":              false,
		"what's the api key for account 42?":            false,
	} {
		if got := asksWhoAmI(withoutValues(query)); got != want {
			t.Errorf("asksWhoAmI(%q) = %v, want %v", query, got, want)
		}
	}
}

func TestCreatesIntoAndAsksToCreate(t *testing.T) {
	for route, want := range map[string]bool{
		"POST /v1/customers":                 true,
		"POST /customers/{id}/cards":         true,
		"POST /v1/customers/{customer}":      false,
		"POST /items/{id}/":                  false,
		"POST /items:batchCreate":            true,
		"PUT /v1/customers":                  false,
		"POST /":                             false,
		"POST /forms#submit":                 true,
		"POST /search?q={q}":                 false, // an action
		"POST /invoices/{id}/send":           false,
		"POST /tokens/rotate":                false,
		"POST /projects/{id}/merge_requests": true,
	} {
		method, path, _ := strings.Cut(route, " ")
		if got := createsInto(&catalog.Tool{Request: catalog.Request{Method: method, Path: path}}); got != want {
			t.Errorf("createsInto(%s) = %v, want %v", route, got, want)
		}
	}
	for query, want := range map[string]bool{
		"create a customer":        true,
		"please add a webhook":     true,
		"new webhook for builds":   true,
		"file a bug: it crashes":   true,
		"make bob an admin":        false,
		"make a new private board": true,
		"update the customer":      false,
		"list customers":           false,
	} {
		if got := asksToCreate(words(query), query); got != want {
			t.Errorf("asksToCreate(%q) = %v, want %v", query, got, want)
		}
	}
}

func TestOpensExisting(t *testing.T) {
	for query, want := range map[string]bool{
		"open message 18c2f0a9b7d4e113 and tell me what it says": true,
		"open the settings":         true,
		"please open my drafts":     true,
		"open a ticket":             false,
		"open an issue for this":    false,
		"open new tabs":             false,
		"open port 443 on the edge": false,
		"open":                      false,
		"list the open issues":      false,
	} {
		clean := withoutValues(query)
		if got := opensExisting(query, clean != query) >= 0; got != want {
			t.Errorf("opensExisting(%q) = %v, want %v", query, got, want)
		}
	}
}

// A British spelling meets the American one API documents mostly use,
// in every inflection.
func TestStemMeetsAmericanSpelling(t *testing.T) {
	for _, pair := range [][2]string{{"colour", "color"}, {"colours", "colors"}, {"organisation", "organization"},
		{"organised", "organized"}, {"authorise", "authorize"}, {"licence", "license"}, {"cancelled", "canceled"},
		{"catalogue", "catalog"}, {"favourites", "favorites"}, {"centre", "center"}, {"enrolment", "enrollment"},
		{"installed", "install"}, {"uninstalling", "uninstall"}, {"enrolled", "enroll"}} {
		if a, b := stem(pair[0]), stem(pair[1]); a != b {
			t.Errorf("stem(%q) = %q, stem(%q) = %q: they should meet", pair[0], a, pair[1], b)
		}
	}
	// Words that only look British stay what they are.
	for _, w := range []string{"enterprise", "promise", "four", "hour", "tour", "our"} {
		if stem(w) != stemInflection(w) {
			t.Errorf("stem(%q) = %q, a spelling it does not have", w, stem(w))
		}
	}
}

// Sharing a thing with someone asks of who may access it; a "shared
// drive" is a kind of drive.
func TestQueryTermsOfSharing(t *testing.T) {
	wantAsks(t, stem("permission"), map[string]bool{
		"share the budget sheet with anna":          true,
		"who is the onboarding deck shared with":    true,
		"what does sharing entry 42 allow":          true,
		"what are the settings of shared drive 0AF": false,
		"list shared links":                         false,
		"list files shared with me":                 false,
		"disable screen sharing for meeting 123":    false,
	})
}

// "Set up" after have or is says how things are: nothing is created.
func TestSetUpAsAState(t *testing.T) {
	wantAsks(t, stem("create"), map[string]bool{
		"set up a webhook for pushes":                 true,
		"what webhooks do I have set up":              false,
		"is the default reminder already set up":      false,
		"is the webhook set up?":                      false,
		"have the bot set up a webhook":               true,
		"which integrations are already set up there": false,
	})
	for _, q := range []string{"what webhooks do I have set up", "already set up webhooks", "I have set up a webhook but it does not fire"} {
		if in := queryIntent(q); in == intentWrite {
			t.Errorf("queryIntent(%q) is a write: what is set up is no order", q)
		}
	}
}

// What a change lets someone do weighs less than the change: "share it
// with anna so she can edit it" asks to share.
func TestQueryTermsOfAPurpose(t *testing.T) {
	terms := queryTerms("share my work calendar with jordan so they can edit events", false)
	if share, edit := terms[stem("share")], terms[stem("edit")]; !share.own || share.w != 1 || !edit.own || edit.w >= share.w {
		t.Errorf("share weighs %v and edit %v: the purpose should weigh less", share, edit)
	}
	terms = queryTerms("so they can edit events, share my calendar", false)
	if share := terms[stem("share")]; share.w != 1 {
		t.Errorf("the clause after a purpose weighs %v, want 1", share.w)
	}
	// A word said again outside the purpose weighs in full.
	terms = queryTerms("share the doc with anna so she can comment, then add a comment", false)
	if c := terms[stem("comment")]; c.w != 1 {
		t.Errorf("comment, said again as what is asked, weighs %v, want 1", c.w)
	}
}

// "What is it set to?" asks of a setting; "set it to private" changes
// one.
func TestQueryTermsOfWhatIsSet(t *testing.T) {
	wantAsks(t, stem("setting"), map[string]bool{
		"What time zone is my calendar account set to?": true,
		"what's the default branch set to":              true,
		"set the default branch to main":                false,
		"is the visibility set to private?":             false,
	})
}

// What the asker did is told, not asked for: "I exported them" is no
// export. The order, if one follows in a clause of its own, is what is
// asked.
func TestQueryIntentOfWhatWasDone(t *testing.T) {
	wantIntents(t, map[string]intent{
		"I exported my meetings as iCal":                              intentNone,
		"we deleted the branch by mistake":                            intentNone,
		"I exported my meetings as iCal, bring them into my calendar": intentWrite,
		"we deleted the branch by mistake, bring it back":             intentWrite,
		"we just deleted the branch, bring it back":                   intentWrite,
		"I signed up yesterday, show my account":                      intentRead,
		"export my meetings as iCal":                                  intentRead,
	})
}

// A request may first say how things stand, and then what to do.
func TestQueryIntentOfALaterClause(t *testing.T) {
	wantIntents(t, map[string]intent{
		"mchen is out Dec 24-26, set up an override so her shifts get covered": intentWrite,
		"Marco is leaving: give his filter to Ana":                             intentWrite,
		"the deployer role needs to list secrets, add that rule":               intentWrite,
		"the nightly sync is stale; show me its last run":                      intentRead,
		"the nightly sync is stale, the last run failed":                       intentNone,
		// A clause that names what it is about states nothing, and a
		// later word that describes it orders nothing.
		"recent CI runs, sorted by date":         intentNone,
		"my PRs, merged ones":                    intentNone,
		"servers, stopped":                       intentNone,
		"pods in prod, restarted today":          intentNone,
		"the build is red, failing since monday": intentNone,
	})
	// An identifier's pieces are no words that part a phrasal verb.
	// An identifier stands as a word for it: "3fa85f64-… is stuck" states.
	for _, query := range []string{"Get message 18d44e01a9c3b2f7 back out of the trash", "3fa85f64-5717-4562-b3fc-2c963f66afa6 is stuck, restart it"} {
		q := SearchQuery{Query: query}
		if err := q.check(); err != nil || q.want != intentWrite {
			t.Errorf("%q is %v (%v), want a write", query, q.want, err)
		}
	}
}

// A request put as a question asks for what its verb does.
func TestQueryIntentOfAPoliteOrder(t *testing.T) {
	wantIntents(t, map[string]intent{
		"The client never got invoice in_1Rt55, can you email it to them again?": intentWrite,
		"could you please archive the Q3 board?":                                 intentWrite,
		"can you show me the open invoices?":                                     intentRead,
		"can you ping the API server?":                                           intentRead,
		"can I delete this?":                                                     intentRead,
	})
}

// Pointing a thing at another assigns or updates it; points are no
// pointing.
func TestQueryTermsOfPointing(t *testing.T) {
	wantAsks(t, stem("assign"), map[string]bool{
		"point the domain at deployment dpl_x91":       true,
		"point the SMS webhook to the new inbound URL": true,
		"how many loyalty points does Jo have":         false,
		"point of sale devices":                        false,
	})
}

// wantIntents checks queryIntent of each query.
func wantIntents(t *testing.T, cases map[string]intent) {
	t.Helper()
	for query, want := range cases {
		if got := queryIntent(query); got != want {
			t.Errorf("queryIntent(%q) = %v, want %v", query, got, want)
		}
	}
}

// wantAsks checks whether queryTerms of each query asks for term.
func wantAsks(t *testing.T, term string, cases map[string]bool) {
	t.Helper()
	for query, want := range cases {
		terms := queryTerms(query, false)
		if _, got := terms[term]; got != want {
			t.Errorf("queryTerms(%q) asks for %q: %v, want %v (%v)", query, term, got, want, terms)
		}
	}
}

// Words people say ask for the words APIs use too: a class is what
// education APIs call a course, a video what media APIs call an asset,
// a box a server; a feed is a timeline, things saved for later
// bookmarks, an activity log the actions taken, an identity broker
// an identity provider, a vendor a manufacturer, a cabinet a rack, a
// free address an available one, a note a journal entry; an IP address
// or a block of them asks for its kind.
//
// Who one is logged in as is no impersonation, nor is logging in as
// soon as one can; who is assigned, or has the shared drive, is not who
// did it. The query goes through check, as a search's does.
func TestWordsAskTheAPIsWords(t *testing.T) {
	for _, c := range []struct {
		query, term string
		asks        bool
	}{
		{"list all my classes", "course", true},
		{"list every video", "asset", true},
		{"give me every box we have", "server", true},
		{"show my feed", "timeline", true},
		{"everything I've saved for later", "bookmark", true},
		{"subscribe me to the list", "follow", true},
		{"the recent activity on the board", "action", true},
		{"lock snapshot 99123", "image", true},
		{"tear down staging-7", "delete", true},
		{"test the connection", "check", true},
		{"where can we deploy?", "location", true},
		{"who in the admin console changed it?", "history", true},
		{"sign me in as her", "impersonate", true},
		{"which server is 78.46.10.20 routed to", "ip", true},
		{"carve out 10.0.2.0/24 for the db tier", "subnet", true},
		{"which login brokers are configured?", "provider", true},
		{"taint gpu-node-3", "node", true},
		{"what hardware vendors do we have", "manufacturer", true},
		{"add a 42U cabinet", "rack", true},
		{"the next free address", "available", true},
		{"log a note on edge-02", "journal", true},
		{"restart the frozen access point", "reboot", true},
		{"which sequences does the EMEA team run", "cadence", true},
		{"revoke the leaked token", "authorization", true},
		{"block BitTorrent at the office", "firewall", true},
		{"bundle two ports with LACP", "link", true},
		{"which deals turned into wins", "success", true},
		{"our recent list uploads", "import", true},
		{"what outcomes can a rep pick", "disposition", true},
		{"after a dial", "call", true},
		{"show me the error output", "log", true},
		{"add a region dropdown", "variable", true},
		{"what lead statuses are there", "stage", true},
		{"remove the test company", "account", true},
		{"an email sent outside the CRM", "external", true},
		{"whenever the queue grows", "alert", true},
		{"the raw source of that email", "mime", true},
		{"dump the agent's config", "get", true},
		{"what's plugged into the switch", "client", true},
		{"how many GB did it pull", "usage", true},
		{"check this script for errors", "query", true},
		{"what have we bought", "inventory", true},
		{"who's holding the pager", "oncall", true},
		{"which tablets does she use", "device", true},
		{"a forecast of next month's bill", "preview", true},
		{"is this a valid address", "validate", true},
		{"annotate yesterday's run", "note", true},
		{"which meeting rooms are free", "resource", true},
		{"what paperwork do we need", "requirement", true},
		{"how much credit is left", "balance", true},
		{"how many texts failed", "sms", true},
		{"put a hold on these two numbers", "reservation", true},
		{"which custom attributes do user profiles have", "schema", true},
		{"how much RAM does the host have", "memory", true},
		{"would my edit clash with anything scheduled", "conflict", true},
		{"files should inherit the folder's tags", "cascade", true},
		{"ask bob to take a look at PR 220", "review", true},
		{"what plan is she subscribed to", "subscription", true},
		{"how many replicas is it set to", "scale", true},
		{"how much unallocated space is left", "available", true},
		{"reboot the kiosk", "restart", true},
		{"what changed recently in billing", "latest", true},
		{"the newest firmware", "latest", true},
		{"cover artwork for the album", "image", true},
		{"define a custom field", "create", true},
		{"how long did the backup take", "duration", true},
		{"like that comment", "favorite", true},
		{"which repos are hot this week", "trend", true},
		{"send the newsletter later", "scheduled", true},
		{"what have I liked lately?", "favorite", true},
		{"unlike that post", "favorite", true},
		{"scrub her personal data", "anonymize", true},
		{"which stages does the onboarding board have", "section", true},
		{"upload the signed apk", "release", true},
		{"carry on the import from where it left off", "resume", true},
		{"list our products and their prices", "item", true},
		{"which seats are we charged for", "billable", true},
		{"is this mailbox deliverable", "validate", true},
		{"where is the ipa from build 77", "release", true},
		{"take a backup of the boot disk", "snapshot", true},
		{"scale the pool up to 12", "resize", true},
		{"which GPUs can I get in that zone", "accelerator", true},
		{"that image is outdated", "deprecate", true},
		{"which rooms am I watching for changes", "subscription", true},
		{"what have I watched lately", "subscription", false},
		{"what does SKU 889021 cost", "product", true},
		{"which languages are turned on", "locale", true},
		{"add a relationship type", "association", true},
		{"power cycle web-3", "reset", true},
		{"power cycling the rack pdu", "reset", true},
		{"back up the orders database", "snapshot", true},
		{"put the CFO into the outbound sequence", "add", true},
		{"ping me about failed builds", "notification", true},
		{"ping the host for me", "notification", false},
		{"ping the host for me", "health", true},
		{"power use per billing cycle", "reset", false},
		{"which backups are frozen for litigation", "legal", true},
		{"flush the cached results for dataset 4", "invalidate", true},
		{"forward the cluster logs to our SIEM", "syslog", true},
		{"list the restore points of vm-7", "snapshot", true},
		{"restore it to the point before the upgrade", "snapshot", false},
		{"which Active Directory domains can sign in", "ldap", true},
		{"list active users in the directory", "ldap", false},
		{"hook up our Stripe source to Snowflake", "connection", true},
		{"the whole hierarchy of departments", "tree", true},
		{"apply promo code SPRING10", "coupon", true},
		{"which subtitle languages does video 200 have", "caption", true},
		{"what genres can a video be filed under", "category", true},
		{"ban spammer99 across the instance", "blocklist", true},
		{"roll 2.4 out gradually", "phased", true},
		{"in which countries can people download it", "territory", true},
		{"register the test iPhone, UDID 00008110", "device", true},
		{"remove the DEBUG variable from the worker", "env", true},
		{"upvote comment 8842", "like", true},
		{"which hostnames is the shop reachable on", "domain", true},
		{"turn on TOTP for my login", "mfa", true},
		{"ping the cardiology PACS", "echo", true},
		{"which datacenters can I deploy to", "zone", true},
		{"which zones can I deploy to", "region", true},
		{"which regions are there", "zone", false},
		{"the total of invoice in_123", "state", false},
		{"how many videos does it hold in total", "statistics", true},
		{"the biography of Keanu Reeves", "person", true},
		{"we get throttled", "limit", true},
		{"it burned its allowance", "quota", true},
		{"top the balance up by $200", "fund", true},
		{"take back my heart on that post", "reaction", true},
		{"link our FedEx account", "connect", true},
		{"fix the broken link in the footer", "connect", false},
		{"remove the old-lobby chat room", "channel", true},
		{"add dave to the project-x group chat", "channel", true},
		{"let a visitor chat in the living room", "channel", false},
		{"group the chats by day", "channel", false},
		{"report message 5521 as harassment", "flag", true},
		{"show me last month's usage report", "flag", false},
		{"stop notifying me about the random room", "mute", true},
		{"is the image exposed to CVE-2021-44228?", "vulnerability", true},
		{"the latest vulnerability scan of our nodes", "cve", true},
		{"a global variable every directive can read", "parameter", true},
		{"which parameters does the job take", "variable", false},
		{"fake an incoming wire in the sandbox", "simulate", true},
		{"pretend a customer paid by check", "simulate", true},
		{"debit the cash ledger", "bookkeeping", true},
		{"shut down the server", "close", false},
		{"shut down web-3 gracefully", "shutdown", true},
		{"fire up the Sunday broadcast", "start", true},
		{"chart the open issues over time", "trend", true},
		{"unhook the Facebook destination", "disconnect", true},
		{"which distribution destinations do we have", "target", true},
		{"pause the Slack integration", "disable", true},
		{"disable the Slack integration", "pause", false},
		{"mark incident 7f3a as resolved", "close", true},
		{"close the incident", "resolve", false},
		{"resolve the conflicts on pull request 12", "close", false},
		{"resolve the hostname", "close", false},
		{"how many seats are in use", "license", true},
		{"leave a note on alert 55e1", "annotation", true},
		{"the review feedback people left", "annotation", false},
		{"list the bookkeeping accounts", "ledger", false},
		{"add a 23% VAT rate for Portugal", "tax", true},
		{"which tax rates do we charge", "vat", false},
		{"the provinces of Chile", "region", true},
		{"which regions can I deploy to", "province", false},
		{"retry the failed webhook deliveries", "shipping", false},
		{"list the badges of user 5 in chronological order", "history", false},
		{"duplicate the listing", "similar", false},
		{"what logo do recipients see", "branding", true},
		{"which payment rails can we use in Mexico", "channel", true},
		{"close my account for good", "permanent", false},
		{"suspend Tom's access while he's on leave", "deactivate", false},
		{"the buyer changed their mind - call it off", "cancel", true},
		{"send the receipt again", "resend", true},
		{"give the customer their money back", "refund", true},
		{"how many units do we have on hand", "stock", true},
		{"what's on the other hand", "stock", false},
		{"everything I've saved for later", "scheduled", false},
		{"I would like to follow bob", "favorite", false},
		{"shows like Breaking Bad", "favorite", false},
		{"the variables we defined", "create", false},
		{"open a long-lived connection", "duration", false},
		{"release +1 415 555 0199", "phone", true},
		{"text a code to +1 512 555 0100", "phone", false},
		{"reboot the switch", "retry", false},
		{"which account am I logged in as?", "impersonate", false},
		{"sign in as soon as possible", "impersonate", false},
		{"log in as well", "impersonate", false},
		{"who is assigned to it?", "history", false},
		{"who has the shared drive", "history", false},
		{"who owns the archived repos", "history", false},
		{"who in the team can see locked ones", "history", false},
	} {
		q := SearchQuery{Query: c.query}
		if err := q.check(); err != nil {
			t.Fatalf("check(%q): %v", c.query, err)
		}
		if _, got := q.terms[stem(c.term)]; got != c.asks {
			t.Errorf("search %q asks for %q: %v, want %v (%v)", c.query, c.term, got, c.asks, q.terms)
		}
	}
}

func TestRunTogether(t *testing.T) {
	for query, want := range map[string]string{
		"delete the test redis add-on": "testredis redisadd addon",
		"put it on my to-watch list":   "watchlist",
		"check in for the flight":      "checkin",
		"set up the destination":       "",                 // a phrase asks for a create, and no setup
		"add 'watch list' to my tasks": "",                 // a name's words
		"outside SalesLoft":            "outsidesalesloft", // SalesLoft is one word here
		"job 42 of the last 7 days":    "",                 // no number, no stop word
	} {
		q := SearchQuery{Query: query}
		if err := q.check(); err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(q.joined, " "), strings.Join(stemAll(strings.Fields(want)), " "); got != want {
			t.Errorf("%q runs together as %q, want %q", query, got, want)
		}
	}
}

// A phrase that counts only side by side is one of the phrases: one
// dropped from the table must not linger here.
func TestPhrasesTogetherArePhrases(t *testing.T) {
	for _, p := range togetherPhrases {
		if _, ok := phrases[p]; !ok {
			t.Errorf("%q counts only side by side but is no phrase", p)
		}
	}
}

func TestWithoutIPs(t *testing.T) {
	for in, want := range map[string]string{
		"route 78.46.10.20 to web-3":        "route ip to web-3",
		"add 10.0.2.0/24 and 10.0.3.0/24":   "add subnet and subnet",
		"version 1.2.3 of the chart":        "version 1.2.3 of the chart",
		"build 10.0.19041.1":                "build 10.0.19041.1",
		"999.1.1.1 is no address":           "999.1.1.1 is no address",
		"mail bob@10.0.0.1":                 "mail bob@ip",
		"step 1.2.3.4.5 of the runbook":     "step 1.2.3.4.5 of the runbook",
		"curl http://10.0.0.1:8080/health":  "curl http://10.0.0.1:8080/health",
		"agent v1.2.3.4":                    "agent v1.2.3.4",
		"the block 192.168.0.0/33 is wrong": "the block ip/33 is wrong",
	} {
		if got := withoutIPs(in); got != want {
			t.Errorf("withoutIPs(%q) = %q, want %q", in, got, want)
		}
	}
}

// A word of consonants that no tool uses is read as the initials of a
// run of name words, the run most visible tools hold, if two or more
// do; a run that starts with a verb is what is done, and a hidden
// tool's name spells out nothing.
func TestSpelledOut(t *testing.T) {
	names := []string{
		"list_core_v1_persistent_volume_claim_for_all_namespaces",
		"patch_core_v1_namespaced_persistent_volume_claim",
		"read_policy_v1_namespaced_pod_disruption_budget",
		"list_policy_v1_pod_disruption_budget_for_all_namespaces",
		"list_placement_groups",
		"get_placement_group",
		"issues_delete_milestone",
		"issues_update_milestone",
		"repos_delete_milestone",
		"pipeline_object_definition",
		"get_pipeline_object_definition",
		"global_backup",
		"list_global_backups",
	}
	ix := &searchIndex{}
	for _, n := range names {
		ix.names = append(ix.names, termsOf(words(n)))
	}
	all := &searchView{visible: slices.Repeat([]bool{true}, len(names))}
	for term, want := range map[string]string{
		"pvc": "persistent volume claim",
		"pdb": "pod disruption budget",
		"pg":  "placement group",
		"dm":  "", // delete milestone: a verb first
		"pod": "", // a vowel: a word
		"gb":  "", // a unit
		"cvp": "", // core v1 persistent, once only
	} {
		var got []string
		if maybeInitials(stem(term)) {
			got = ix.spelledOut(all, stem(term))
		}
		if want != "" {
			want = strings.Join(terms(want), " ")
		}
		if strings.Join(got, " ") != want {
			t.Errorf("spelledOut(%q) = %q, want %q", term, got, want)
		}
	}
	hidden := &searchView{visible: slices.Clone(all.visible)}
	hidden.visible[2], hidden.visible[3] = false, false
	if got := ix.spelledOut(hidden, "pdb"); got != nil {
		t.Errorf("spelledOut(pdb) with its tools hidden = %q", got)
	}
}

// Ranking a checked query leaves it as it was: the terms one view's
// tools add (a pair run together, a word's derived form) are that view's,
// and ranking the same query over another caller's tools starts from the
// query's own words.
func TestRankLeavesTheQueryAsItWas(t *testing.T) {
	var tools []*tool
	for i, name := range []string{"add_items_to_watchlist", "list_organizations", "get_user"} {
		tools = append(tools, &tool{index: i, def: &catalog.Tool{Name: name, Kind: catalog.KindRead}})
	}
	ix := newSearchIndex(tools)
	q := SearchQuery{Query: "put it on my to-watch list and show the organization", Limit: 5}
	if err := q.check(); err != nil {
		t.Fatal(err)
	}
	before := slices.Sorted(maps.Keys(q.terms))
	all := func(int32) bool { return true }
	first := ix.rank(ix.view(tools), &q, all)
	if !slices.Contains(first, 0) {
		t.Fatalf("ranked %v over every tool, want add_items_to_watchlist (0) among them", first)
	}
	if after := slices.Sorted(maps.Keys(q.terms)); !slices.Equal(after, before) {
		t.Errorf("ranking changed the query's terms from %v to %v", before, after)
	}
	// Ranked again over a view without the watchlist: the same as a query
	// checked afresh.
	fresh := SearchQuery{Query: q.Query, Limit: 5}
	if err := fresh.check(); err != nil {
		t.Fatal(err)
	}
	if again, want := ix.rank(ix.view(tools[1:]), &q, all), ix.rank(ix.view(tools[1:]), &fresh, all); !slices.Equal(again, want) {
		t.Errorf("ranked again over two tools: %v, want %v as a fresh query ranks", again, want)
	}
}
