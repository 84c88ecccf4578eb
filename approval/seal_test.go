package approval_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/gateway/approval"
)

func TestSealOpensWithEveryKeyAndRefusesTampering(t *testing.T) {
	oldKey, newKey := approval.RandomKey(), approval.RandomKey()
	old, _ := approval.NewSealer(oldKey)
	rotated, err := approval.NewSealer(newKey, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	st := &approval.State{Subject: "alice", Workspace: "acme", Tool: "pause_queue", Digest: "abc", Expires: 100, Nonce: approval.NewNonce()}
	sealedOld, _ := old.Seal(st)
	got, err := rotated.Open(sealedOld)
	if err != nil || *got != *st {
		t.Fatalf("Open(sealed with the old key) = %+v, %v; want %+v", got, err, st)
	}
	sealedNew, _ := rotated.Seal(st)
	if _, err := old.Open(sealedNew); !errors.Is(err, approval.ErrTampered) {
		t.Errorf("a sealer without the new key opened its state: %v", err)
	}
	// Flip each byte of the ciphertext in turn: none opens.
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(sealedNew, "v1."))
	for i := range raw {
		b := append([]byte(nil), raw...)
		b[i] ^= 1
		if _, err := rotated.Open("v1." + base64.RawURLEncoding.EncodeToString(b)); !errors.Is(err, approval.ErrTampered) {
			t.Fatalf("byte %d flipped: Open = %v, want ErrTampered", i, err)
		}
	}
	for _, bad := range []string{"", "v1.", "v2." + strings.TrimPrefix(sealedNew, "v1."), sealedNew + "A", strings.Repeat("v1.AAAA", 1000)} {
		if _, err := rotated.Open(bad); !errors.Is(err, approval.ErrTampered) {
			t.Errorf("Open(%.20q) = %v, want ErrTampered", bad, err)
		}
	}
}

func TestStateCheckNamesTheMismatch(t *testing.T) {
	now := time.Unix(1000, 0)
	st := &approval.State{Subject: "alice", Actor: "agent-1", Workspace: "acme", Tool: "t", Digest: "d", Expires: 1060}
	cases := []struct {
		name                       string
		sub, act, ws, tool, digest string
		at                         time.Time
		want                       approval.Mismatch
	}{
		{"matching", "alice", "agent-1", "acme", "t", "d", now, approval.MismatchNone},
		{"other-principal", "mallory", "agent-1", "acme", "t", "d", now, approval.MismatchPrincipal},
		// The same subject acting through another agent is another principal.
		{"other-actor", "alice", "agent-2", "acme", "t", "d", now, approval.MismatchPrincipal},
		{"no-actor", "alice", "", "acme", "t", "d", now, approval.MismatchPrincipal},
		{"other-workspace", "alice", "agent-1", "globex", "t", "d", now, approval.MismatchWorkspace},
		{"other-tool", "alice", "agent-1", "acme", "u", "d", now, approval.MismatchTool},
		{"changed-arguments", "alice", "agent-1", "acme", "t", "e", now, approval.MismatchArguments},
		{"at-expiry", "alice", "agent-1", "acme", "t", "d", time.Unix(1060, 0), approval.MismatchExpired},
	}
	for _, c := range cases {
		if got := st.Check(approval.CallKey{Workspace: c.ws, Subject: c.sub, Actor: c.act, Tool: c.tool, Digest: c.digest}, c.at); got != c.want {
			t.Errorf("%s: Check = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestDigestIsCanonical(t *testing.T) {
	a, _ := approval.Digest([]byte(`{"queue":"q1","n":1,"o":{"b":2,"a":1}}`))
	b, _ := approval.Digest([]byte(` { "o":{"a":1, "b":2}, "n":1 , "queue":"q1"}`))
	c, _ := approval.Digest([]byte(`{"queue":"q2","n":1,"o":{"b":2,"a":1}}`))
	d, _ := approval.Digest([]byte(`{"queue":"q1","n":1.0,"o":{"b":2,"a":1}}`))
	if a != b {
		t.Errorf("two spellings of one object digest apart: %s, %s", a, b)
	}
	if a == c || a == d {
		t.Errorf("different arguments share a digest")
	}
	e, _ := approval.Digest(nil)
	f, _ := approval.Digest([]byte(`{}`))
	if e != f {
		t.Errorf("no arguments and {} digest apart")
	}
	if _, err := approval.Digest([]byte(`{"a":`)); err == nil {
		t.Errorf("Digest of broken JSON: no error")
	}
}

func TestParseKeys(t *testing.T) {
	k1, k2 := approval.RandomKey(), approval.RandomKey()
	keys, err := approval.ParseKeys(base64.StdEncoding.EncodeToString(k1) + ", " + base64.RawURLEncoding.EncodeToString(k2))
	if err != nil || len(keys) != 2 || string(keys[0]) != string(k1) || string(keys[1]) != string(k2) {
		t.Fatalf("ParseKeys = %d keys, %v", len(keys), err)
	}
	for in, want := range map[string]string{
		"":    "no sealing key",
		"!!!": "key 1 is not base64",
		base64.StdEncoding.EncodeToString(k1[:16]): "key 1 has 16 bytes, want 32",
	} {
		if _, err := approval.ParseKeys(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseKeys(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}

func FuzzOpen(f *testing.F) {
	s, _ := approval.NewSealer(approval.RandomKey())
	good, _ := s.Seal(&approval.State{Subject: "a", Expires: 1})
	for _, seed := range []string{good, "", "v1.", "v1.AAAA", good[:len(good)-2]} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		st, err := s.Open(in)
		if err == nil && in != good && st.Subject != "a" {
			t.Fatalf("Open(%q) opened a state never sealed: %+v", in, st)
		}
	})
}

func FuzzCanonical(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":1,"b":[1,2,{"c":null}]}`, `{"a":`, `[1]`, `1e400`, `"x"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := approval.Canonical(in)
		if err != nil {
			return
		}
		again, err := approval.Canonical(c)
		if err != nil || string(again) != string(c) {
			t.Fatalf("Canonical is not stable: %q -> %q -> %q (%v)", in, c, again, err)
		}
	})
}

func TestSealDataIsBoundToItsPurposeAndOpensAfterRotation(t *testing.T) {
	old, _ := approval.NewSealer(approval.RandomKey())
	text, err := old.SealData("session", []byte(`{"sub":"alice"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := old.OpenData("session", text); err != nil || string(got) != `{"sub":"alice"}` {
		t.Fatalf("OpenData = %q, %v", got, err)
	}
	if _, err := old.OpenData("login", text); err != approval.ErrTampered {
		t.Errorf("opened for another purpose: %v", err)
	}
	if _, err := old.Open(text); err != approval.ErrTampered {
		t.Errorf("opened as a State: %v", err)
	}
	b := []byte(text)
	b[len(b)-3] ^= 1
	if _, err := old.OpenData("session", string(b)); err != approval.ErrTampered {
		t.Errorf("tampered text opened: %v", err)
	}
}

// The approval page's cookies come back from any browser: whatever they
// hold, OpenData never panics and opens only what was sealed for its
// purpose.
func FuzzOpenData(f *testing.F) {
	s, _ := approval.NewSealer(approval.RandomKey())
	good, _ := s.SealData("session", []byte("hello"))
	for _, seed := range []string{good, "", "v1.", "v1.AAAA", good[:len(good)-2], good + "A"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		plain, err := s.OpenData("session", in)
		if err == nil && string(plain) != "hello" {
			t.Fatalf("OpenData(%q) opened %q, never sealed", in, plain)
		}
		if _, err := s.OpenData("signin", in); err == nil {
			t.Fatalf("OpenData(%q) opened for another purpose", in)
		}
	})
}

// Sealed data of any size opens again: empty (only nonce and tag) and
// larger than the nonce and tag together.
func TestSealDataRoundTripsEmptyAndLargerData(t *testing.T) {
	s, _ := approval.NewSealer(approval.RandomKey())
	for _, plain := range []string{"", strings.Repeat("a", 41), strings.Repeat(`{"sub":"alice"}`, 100)} {
		text, err := s.SealData("session", []byte(plain))
		if err != nil {
			t.Fatalf("SealData(%d bytes): %v", len(plain), err)
		}
		if got, err := s.OpenData("session", text); err != nil || string(got) != plain {
			t.Errorf("OpenData of %d sealed bytes = %q, %v", len(plain), got, err)
		}
	}
}

// A cookie too short to hold a nonce and a tag is refused as tampered
// (never read past its end).
func TestOpenDataRefusesTextShorterThanNonceAndTag(t *testing.T) {
	s, _ := approval.NewSealer(approval.RandomKey())
	for _, n := range []int{1, 8, 10, 23, 24, 39} {
		text := "v1." + base64.RawURLEncoding.EncodeToString(make([]byte, n))
		if _, err := s.OpenData("session", text); err != approval.ErrTampered {
			t.Errorf("OpenData of %d raw bytes = %v, want ErrTampered", n, err)
		}
	}
}
