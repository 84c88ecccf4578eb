package approval

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/chacha20poly1305"
)

// KeysEnv names the environment variable holding the sealing keys: base64
// keys of 32 bytes separated by commas, newest first.
const KeysEnv = "GATEWAY_APPROVAL_KEYS"

// sealVersion prefixes every sealed state, so a later format can be told
// apart from this one.
const sealVersion = "v1."

// State is what a confirmation's requestState binds: who asked, where,
// for which tool and exactly which arguments, until when. Nonce names this
// prompt; it is spent when the confirmed call executes.
type State struct {
	Subject   string `json:"sub"`
	Actor     string `json:"act,omitempty"` // the token's actor: who acts for the subject
	Workspace string `json:"ws"`
	Tool      string `json:"tool"`
	Digest    string `json:"args"` // hex SHA-256 of the canonical arguments
	Expires   int64  `json:"exp"`  // unix seconds
	Nonce     string `json:"nonce"`
	// Epoch is the approval store's generation when the state was
	// issued (see [Store.Epoch]): a state from before the store lost its
	// data cannot be checked for reuse, and is refused.
	Epoch string `json:"epoch,omitempty"`
}

// Errors a sealed state can fail with.
var (
	ErrTampered = errors.New("the request state was not issued by this gateway or was altered")
	ErrNoKeys   = errors.New("no sealing key")
)

// Sealer seals and opens [State] with XChaCha20-Poly1305 (an AEAD with a
// 192-bit random nonce, so random nonces never collide in practice). The
// newest key seals; every key opens, which is how keys rotate. A Sealer
// is immutable and safe for concurrent use.
type Sealer struct {
	keys [][]byte
}

// NewSealer makes a Sealer from raw 32-byte keys, newest first.
func NewSealer(keys ...[]byte) (*Sealer, error) {
	if len(keys) == 0 {
		return nil, ErrNoKeys
	}
	for i, k := range keys {
		if len(k) != chacha20poly1305.KeySize {
			return nil, fmt.Errorf("sealing key %d has %d bytes, want %d", i+1, len(k), chacha20poly1305.KeySize)
		}
	}
	return &Sealer{keys: keys}, nil
}

// ParseKeys parses the value of [KeysEnv]: base64 (standard or URL
// alphabet, padded or not) keys of 32 bytes, separated by commas, newest
// first.
func ParseKeys(s string) ([][]byte, error) {
	var out [][]byte
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, err := decodeKey(part)
		if err != nil {
			return nil, fmt.Errorf("%s: key %d is not base64: %v", KeysEnv, i+1, err)
		}
		if len(k) != chacha20poly1305.KeySize {
			return nil, fmt.Errorf("%s: key %d has %d bytes, want %d", KeysEnv, i+1, len(k), chacha20poly1305.KeySize)
		}
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w", KeysEnv, ErrNoKeys)
	}
	return out, nil
}

func decodeKey(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil {
			return k, nil
		}
	}
	_, err := base64.StdEncoding.DecodeString(s)
	return nil, err
}

// RandomKey returns a fresh 32-byte key.
func RandomKey() []byte {
	k := make([]byte, chacha20poly1305.KeySize)
	rand.Read(k)
	return k
}

// NewNonce returns a fresh random identifier (128 bits, hex).
func NewNonce() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Seal returns st sealed under the newest key, as URL-safe text.
func (s *Sealer) Seal(st *State) (string, error) {
	plain, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	aead, err := chacha20poly1305.NewX(s.keys[0])
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	rand.Read(nonce)
	out := aead.Seal(nonce, nonce, plain, []byte(sealVersion))
	return sealVersion + base64.RawURLEncoding.EncodeToString(out), nil
}

// maxSealed bounds what Open reads: a state is a few hundred bytes.
const maxSealed = 4096

// Open returns the state sealed in text, or [ErrTampered] when no key
// opens it. Expiry is the caller's to check (see [State.Check]).
func (s *Sealer) Open(text string) (*State, error) {
	plain, err := s.OpenData("", text) // a State is sealed for no purpose
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(plain, &st); err != nil {
		return nil, ErrTampered
	}
	return &st, nil
}

// Mismatch says which binding of a state a retried call does not match.
type Mismatch string

// Mismatches, in the order [State.Check] tests them.
const (
	MismatchNone      Mismatch = ""
	MismatchPrincipal Mismatch = "principal"
	MismatchWorkspace Mismatch = "workspace"
	MismatchTool      Mismatch = "tool"
	MismatchArguments Mismatch = "arguments"
	MismatchExpired   Mismatch = "expired"
)

// NewState returns the state of a prompt for the call k, valid until
// expires, named by nonce.
func NewState(k CallKey, expires time.Time, nonce string) *State {
	return &State{Subject: k.Subject, Actor: k.Actor, Workspace: k.Workspace, Tool: k.Tool, Digest: k.Digest, Expires: expires.Unix(), Nonce: nonce}
}

// Check compares st with the call k that carries it. The principal is the
// subject and the actor together: one subject's tokens may act for
// several agents, and a confirmation given for one is not the other's.
func (st *State) Check(k CallKey, now time.Time) Mismatch {
	switch {
	case st.Subject != k.Subject || st.Actor != k.Actor:
		return MismatchPrincipal
	case st.Workspace != k.Workspace:
		return MismatchWorkspace
	case st.Tool != k.Tool:
		return MismatchTool
	case st.Digest != k.Digest:
		return MismatchArguments
	case now.Unix() >= st.Expires:
		return MismatchExpired
	}
	return MismatchNone
}

// Digest returns the hex SHA-256 of args (a JSON object, or empty for
// none) in canonical form: decoded with numbers kept as written, then
// encoded with object keys sorted and no insignificant space. Two
// spellings of the same object ({"a":1,"b":2} and { "b":2, "a":1 }) have
// one digest; 1 and 1.0 do not, since the upstream may see them apart.
func Digest(args []byte) (string, error) {
	c, err := Canonical(args)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// Canonical returns args in canonical form (see [Digest]).
func Canonical(args []byte) ([]byte, error) {
	if t := strings.TrimSpace(string(args)); t == "" || t == "null" {
		return []byte("{}"), nil
	}
	// One JSON value and nothing after it: the decoder alone would stop
	// after "null" in "null}0" (More reports false before a "}").
	if !json.Valid(args) {
		return nil, errors.New("arguments are not one JSON value")
	}
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("arguments are not JSON: %v", err)
	}
	if v == nil {
		return []byte("{}"), nil // null, however spaced, is no arguments
	}
	// encoding/json sorts map keys and writes json.Number as written.
	return json.Marshal(v)
}

// SealData seals plain under the newest key for purpose (bound as
// associated data, so text sealed for one purpose never opens as
// another, nor as a [State]), as URL-safe text. The approval page keeps
// its sign-in and session cookies this way: no server-side state, so any
// node holding the keys serves them.
func (s *Sealer) SealData(purpose string, plain []byte) (string, error) {
	aead, err := chacha20poly1305.NewX(s.keys[0])
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	rand.Read(nonce)
	out := aead.Seal(nonce, nonce, plain, []byte(sealVersion+purpose))
	return sealVersion + base64.RawURLEncoding.EncodeToString(out), nil
}

// OpenData opens text sealed by [Sealer.SealData] for purpose with any
// key, or returns [ErrTampered].
func (s *Sealer) OpenData(purpose, text string) ([]byte, error) {
	if len(text) > maxSealed || !strings.HasPrefix(text, sealVersion) {
		return nil, ErrTampered
	}
	raw, err := base64.RawURLEncoding.DecodeString(text[len(sealVersion):])
	if err != nil || len(raw) < chacha20poly1305.NonceSizeX+chacha20poly1305.Overhead {
		return nil, ErrTampered
	}
	nonce, sealed := raw[:chacha20poly1305.NonceSizeX], raw[chacha20poly1305.NonceSizeX:]
	for _, k := range s.keys {
		aead, err := chacha20poly1305.NewX(k)
		if err != nil {
			continue
		}
		if plain, err := aead.Open(nil, nonce, sealed, []byte(sealVersion+purpose)); err == nil {
			return plain, nil
		}
	}
	return nil, ErrTampered
}
