package proxy

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

var credentialCases = []struct{ in, want string }{
	{"db down: postgres://app:s3cret@db.internal:5432/app", "db down: postgres://db.internal:5432/app"},
	{"see https://ops:hunter2@status.internal/", "see https://status.internal/"},
	{"clone https://ghp_token123@github.com/org/repo failed", "clone https://github.com/org/repo failed"},
	{"redis:default:pa55@cache:6379 refused", "redis:cache:6379 refused"},
	{"mongodb+srv://u:p@a@cluster0.example.net/db", "mongodb+srv://cluster0.example.net/db"},
	{"two: http://a:b@x and ftp://c:d@y", "two: http://x and ftp://y"},
	{`{"url":"amqp://guest:guest@mq/"}`, `{"url":"amqp://mq/"}`},
	{"HTTPS://User:Pw@Host", "HTTPS://Host"},
	// Passwords are quoted as they were set: "/", "?", "#" and "@" in one
	// do not end it.
	{"db down: postgres://app:p/ss@db.internal:5432/app", "db down: postgres://db.internal:5432/app"},
	{"db down: postgres://app:p?ss=1@db.internal/app", "db down: postgres://db.internal/app"},
	{"db down: postgres://app:p#ss@db.internal/app", "db down: postgres://db.internal/app"},
	{"db down: postgres://app:p@ss@db.internal/app", "db down: postgres://db.internal/app"},
	{"db down: postgres://app:p@ss/w?o#r@d@db.internal/app?sslmode=off", "db down: postgres://db.internal/app?sslmode=off"},
	{"db down: postgres://app:1234/5@db/app", "db down: postgres://db/app"},
	{"db down: postgres://app@corp:p/ss@db/app", "db down: postgres://db/app"},
	{`{"url":"amqp://guest:g/u?e#s@t@mq/"}`, `{"url":"amqp://mq/"}`},
	{"redis:default:p/a?s#s@w@cache:6379 refused", "redis:cache:6379 refused"},
	// What is not a URL's credentials stays.
	{"see https://example.com:8443/users/@me", "see https://example.com:8443/users/@me"},
	{"see http://localhost:8080/@scope/pkg and http://[::1]:80/a@b", "see http://localhost:8080/@scope/pkg and http://[::1]:80/a@b"},
	{"https://example.com/search?q=a@b#c@d", "https://example.com/search?q=a@b#c@d"},
	{"contact admin@example.com", "contact admin@example.com"},
	{"https://example.com/users/@me", "https://example.com/users/@me"},
	{"error: quota exceeded @ 10:30", "error: quota exceeded @ 10:30"},
	{"no at sign: https://a:b", "no at sign: https://a:b"},
}

func TestStripURLCredentials(t *testing.T) {
	for _, tc := range credentialCases {
		if got := stripURLCredentials(tc.in); got != tc.want {
			t.Errorf("stripURLCredentials(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestErrorMessageStripsBeforeTheCut(t *testing.T) {
	// The credential sits across the 300-byte cut: cutting first would
	// leave its first half, unmatched, in the message.
	long := strings.Repeat("x", maxErrorMessage-20)
	msg := errorMessage([]byte(`{"error":"`+long+` postgres://app:s3cretpassword@db/app"}`), "application/json", "")
	if strings.Contains(msg, "s3cret") || strings.Contains(msg, "app:") {
		t.Errorf("errorMessage kept part of a credential: %q", msg[len(long):])
	}
}

func FuzzStripURLCredentials(f *testing.F) {
	for _, tc := range credentialCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := stripURLCredentials(s)
		if again := stripURLCredentials(out); again != out {
			t.Errorf("stripURLCredentials(%q) = %q, which still holds credentials (%q once more)", s, out, again)
		}
		if len(out) > len(s) {
			t.Errorf("stripURLCredentials(%q) grew to %q", s, out)
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Errorf("stripURLCredentials(%q) = %q, not valid UTF-8", s, out)
		}
	})
}

func TestCleanReasonDropsAWordACutMayHaveSplit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		cut  bool
		want string
	}{
		{"short reason", false, "short reason"},
		{"bad\r\n\tinput\x00\x1b[0m \u202eevil\u200b", false, "bad input[0m evil"},
		{"connect postgres://app:s3cr", true, "connect"},
		{strings.Repeat(" ", 9000) + "x  y", false, "x y"},
		{strings.Repeat("ab ", 2000) + "postgres://app:" + strings.Repeat("s", 5000) + "@db", false, ""},
		// maxErrorMessage bytes whole; one more is cut, never inside a
		// character: "é" straddling the cut goes with it.
		{strings.Repeat("x", maxErrorMessage), false, strings.Repeat("x", maxErrorMessage)},
		{strings.Repeat("x", maxErrorMessage+1), false, strings.Repeat("x", maxErrorMessage) + "…"},
		{strings.Repeat("x", maxErrorMessage-1) + "é", false, strings.Repeat("x", maxErrorMessage-1) + "…"},
		{strings.Repeat("x", maxErrorMessage-1) + "éé", false, strings.Repeat("x", maxErrorMessage-1) + "…"},
		{strings.Repeat("x", maxErrorMessage-2) + "éé", false, strings.Repeat("x", maxErrorMessage-2) + "é…"},
		{strings.Repeat("x", maxErrorMessage-1) + "€", false, strings.Repeat("x", maxErrorMessage-1) + "…"},
	} {
		got := cleanReason(tc.in, tc.cut)
		if tc.want == "" {
			if strings.Contains(got, "app:") || len(got) > maxErrorMessage+len("…") {
				t.Errorf("cleanReason(%.40q…) = %q, want it bounded and without the credential", tc.in, got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("cleanReason(%q, %v) = %q, want %q", tc.in, tc.cut, got, tc.want)
		}
	}
}

// FuzzErrorMessage: whatever an upstream's error body, the reason is
// bounded, valid UTF-8, free of control characters and of URL credentials.
func FuzzErrorMessage(f *testing.F) {
	for _, tc := range credentialCases {
		f.Add([]byte(tc.in), "text/plain", "")
		f.Add([]byte(`{"error":"`+tc.in+`"}`), "application/json", "")
	}
	f.Add([]byte(`"bare string"`), "application/json", "")
	f.Add([]byte(`{"meta":{"why":"x"}}`), "application/json", "meta.why")
	f.Add([]byte("<html><title>502 Bad Gateway</title></html>"), "text/html", "")
	f.Add([]byte("a\r\nb\x00c\u202ed"), "text/plain", "")
	f.Fuzz(func(t *testing.T, body []byte, mediaType, path string) {
		msg := errorMessage(body, mediaType, path)
		if len(msg) > maxErrorMessage+len("…") {
			t.Errorf("errorMessage(%q) is %d bytes", body, len(msg))
		}
		if !utf8.ValidString(msg) || strings.ContainsFunc(msg, unicode.IsControl) {
			t.Errorf("errorMessage(%q) = %q: invalid UTF-8 or a control character", body, msg)
		}
		if stripURLCredentials(msg) != msg {
			t.Errorf("errorMessage(%q) = %q keeps URL credentials", body, msg)
		}
	})
}

// TestErrorReasonScanBounds pins each bound of the reason scan at limit−1,
// limit and limit+1: a text body is read up to maxReasonScan bytes, and a
// body longer than that is a prefix whose last word is dropped; the cleaned
// text keeps at most maxReasonWindow bytes, and a text longer than that loses
// its last word too (it may be half a credential).
func TestErrorReasonScanBounds(t *testing.T) {
	// White space costs nothing in the window, so the scan bound can be
	// reached with a short reason at the end of a long body.
	padded := func(n int, tail string) []byte {
		return []byte(strings.Repeat(" ", n-len(tail)) + tail)
	}
	for _, tc := range []struct {
		name string
		body []byte
		want string
	}{
		{"scan-1", padded(maxReasonScan-1, "disk is full"), "disk is full"},
		{"scan", padded(maxReasonScan, "disk is full"), "disk is full"},
		{"scan+1", padded(maxReasonScan+1, "disk is full"), "disk is"},
	} {
		if got := errorMessage(tc.body, "text/plain", ""); got != tc.want {
			t.Errorf("%s: errorMessage(%d bytes of text) = %q, want %q", tc.name, len(tc.body), got, tc.want)
		}
	}

	// The window: a first word, then x's up to n bytes in all.
	windowed := func(n int) string { return "first " + strings.Repeat("x", n-len("first ")) }
	long := strings.Repeat("x", maxErrorMessage-len("first ")) // the part that survives the 300-byte cut
	for _, tc := range []struct {
		name string
		in   string
		want string
	}{
		{"window-1", windowed(maxReasonWindow - 1), "first " + long + "…"},
		{"window", windowed(maxReasonWindow), "first " + long + "…"},
		{"window+1", windowed(maxReasonWindow + 1), "first"},
	} {
		if got := cleanReason(tc.in, false); got != tc.want {
			t.Errorf("%s: cleanReason(%d bytes) = %.40q…, want %.40q…", tc.name, len(tc.in), got, tc.want)
		}
	}
}

// TestErrorReasonShapes pins which parts of an error body become the
// reason: at most two distinct JSON messages, and an HTML page's title
// wherever it starts.
func TestErrorReasonShapes(t *testing.T) {
	for _, tc := range []struct {
		body, mediaType, want string
	}{
		{`{"detail":"a","title":"b","message":"c"}`, "application/json", "a: b"},
		{`{"detail":"a","title":"a","message":"c"}`, "application/json", "a: c"},
		{`<title>Bad Gateway</title>`, "text/html", "Bad Gateway"},
		{`<html><TITLE lang="en">Bad &amp; Gateway</title>`, "text/html", "Bad & Gateway"},
		{`<title>no end`, "text/html", ""},
		{`<title no close`, "text/html", ""},
		{`<html>no title</html>`, "text/html", ""},
		// Bytes that change length when lower-cased do not shift the title.
		{"\xff\xff\xff<title>Bad Gateway</title>", "text/html", "Bad Gateway"},
		{"<p>İİİİ</p><TITLE>Bad Gateway</TITLE>", "text/html", "Bad Gateway"},
	} {
		if got := errorMessage([]byte(tc.body), tc.mediaType, ""); got != tc.want {
			t.Errorf("errorMessage(%q, %s) = %q, want %q", tc.body, tc.mediaType, got, tc.want)
		}
	}
}
