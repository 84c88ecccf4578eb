package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

// MaxTokenTTL bounds `gateway token --ttl`: a development token is for a
// working day; one that lives for months is a credential nobody rotates.
const MaxTokenTTL = 24 * time.Hour

// tokenSpec is what a development token says.
type tokenSpec struct {
	subject, workspace, actor string
	scopes                    []string
	issuer, audience          string
	ttl                       time.Duration
	paths                     catalog.Principal // where the claims go
}

// claims builds the JWT claims, placing identity at the catalog's paths.
func (s tokenSpec) claims(now time.Time) jwt.MapClaims {
	c := jwt.MapClaims{"iat": now.Unix(), "exp": now.Add(s.ttl).Unix()}
	if s.issuer != "" {
		c["iss"] = s.issuer
	}
	if s.audience != "" {
		c["aud"] = s.audience
	}
	setPath(c, or(s.paths.Subject, "sub"), s.subject)
	if s.workspace != "" { // a tenantless catalog needs none
		setPath(c, or(s.paths.Workspace, "ws"), s.workspace)
	}
	setPath(c, or(s.paths.Scopes, "scope"), strings.Join(s.scopes, " "))
	if s.actor != "" && s.paths.Actor != "" {
		setPath(c, s.paths.Actor, s.actor)
	}
	return c
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// setPath sets a dotted gjson-style path, creating objects on the way. A
// backslash escapes the next character, so `https://example\.com/ws` is one
// key, as gjson reads it.
func setPath(m map[string]any, path string, v any) {
	parts := splitPath(path)
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

func splitPath(path string) []string {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c == '\\' && i+1 < len(path):
			i++
			cur.WriteByte(path[i])
		case c == '.':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(parts, cur.String())
}

// sign signs claims with an HMAC secret or a PEM private key.
func sign(c jwt.MapClaims, secret []byte, keyPEM []byte) (string, error) {
	if secret != nil {
		return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(secret)
	}
	key, err := parsePrivateKey(keyPEM)
	if err != nil {
		return "", err
	}
	var m jwt.SigningMethod
	switch k := key.(type) {
	case *rsa.PrivateKey:
		m = jwt.SigningMethodRS256
	case *ecdsa.PrivateKey:
		switch k.Curve.Params().BitSize {
		case 384:
			m = jwt.SigningMethodES384
		case 521:
			m = jwt.SigningMethodES512
		default:
			m = jwt.SigningMethodES256
		}
	case ed25519.PrivateKey:
		m = jwt.SigningMethodEdDSA
	default:
		return "", fmt.Errorf("unsupported private key type %T", key)
	}
	return jwt.NewWithClaims(m, c).SignedString(key)
}

func parsePrivateKey(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block in key file")
	}
	switch block.Type {
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(block.Bytes)
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("unsupported private key type %T", k)
		}
		return s, nil
	}
	return nil, fmt.Errorf("PEM block %q is not a private key", block.Type)
}

func runToken(args []string, stdout, stderr io.Writer, env lookupEnv) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gateway token --sub S --workspace W --scopes \"a b\" (--secret-env VAR | --key FILE) [flags]\n\nSigns a JWT for development and tests; production tokens come from your identity provider.")
		fs.PrintDefaults()
	}
	var spec tokenSpec
	fs.StringVar(&spec.subject, "sub", "", "subject (required)")
	fs.StringVar(&spec.workspace, "workspace", "", "workspace (required)")
	fs.StringVar(&spec.actor, "actor", "", "audit actor, placed at the catalog's principal.actor path")
	scopes := fs.String("scopes", "", "space-separated scopes")
	fs.DurationVar(&spec.ttl, "ttl", time.Hour, "lifetime, at most 24h and at most the catalog's auth.max_token_lifetime")
	catPath := fs.String("catalog", envOr(env, "GATEWAY_CATALOG", "catalog.yaml"), "catalog whose auth section gives issuer, audience and claim paths")
	issuer := fs.String("issuer", "", "issuer (default: the catalog's auth.jwt.issuer)")
	audience := fs.String("audience", "", "audience (default: the catalog's auth.jwt.audience)")
	secretEnv := fs.String("secret-env", "", "environment variable holding the HS256 secret")
	keyFile := fs.String("key", "", "PEM private key file (RSA, ECDSA or Ed25519)")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	// A missing or conflicting flag is named, never left to the usage text
	// or a zero value.
	var missing string
	switch {
	case spec.subject == "":
		missing = "--sub is required: the subject the gateway maps to a principal"
	case *secretEnv == "" && *keyFile == "":
		missing = "one of --secret-env or --key is required"
	case *secretEnv != "" && *keyFile != "":
		missing = "--secret-env and --key cannot both be given"
	}
	if missing != "" {
		fmt.Fprintf(stderr, "gateway token: %s\nrun \"gateway token -h\" for its flags\n", missing)
		return exitError(2)
	}
	switch {
	case spec.ttl <= 0:
		return fmt.Errorf("--ttl must be positive, got %s", spec.ttl)
	case spec.ttl > MaxTokenTTL:
		return fmt.Errorf("--ttl %s is over the %s bound of development tokens; long-lived tokens come from your identity provider", spec.ttl, MaxTokenTTL)
	}
	spec.scopes = strings.Fields(*scopes)
	// Only auth (and the upstreams' workspace bindings) are read: minting
	// a token must not need the upstreams' credentials in the environment.
	if cat, err := catalog.Load(*catPath, &catalog.LoadOptions{Getenv: env, AuthOnly: true}); err == nil {
		if m := cat.Auth.MaxTokenLifetime; m > 0 && spec.ttl > m.D() {
			return fmt.Errorf("--ttl %s is over the catalog's auth.max_token_lifetime %s: the gateway would refuse the token", spec.ttl, m)
		}
		spec.paths = cat.Auth.Principal
		// The check serve's verifier makes: never mint a token for a
		// workspace the gateway refuses. A tenantless catalog (every
		// upstream workspace: none) needs none.
		if spec.workspace == "" && !cat.Auth.Principal.WorkspaceOptional {
			fmt.Fprintf(stderr, "gateway token: --workspace is required (catalog %s binds a workspace)\nrun \"gateway token -h\" for its flags\n", *catPath)
			return exitError(2)
		}
		if pat := or(cat.Auth.Principal.WorkspacePattern, catalog.DefaultWorkspacePattern); spec.workspace != "" && !workspaceMatches(pat, spec.workspace) {
			return fmt.Errorf("--workspace %q does not match the catalog's auth.principal.workspace_pattern %s: the gateway would refuse the token", spec.workspace, pat)
		}
		if j := cat.Auth.JWT; j != nil {
			spec.issuer, spec.audience = j.Issuer, j.Audience
		}
	} else if *issuer == "" || *audience == "" {
		fmt.Fprintf(stderr, "gateway token: catalog %s not usable (%v); pass --issuer and --audience\n", *catPath, firstLine(err))
		return exitError(1)
	} else if spec.workspace == "" {
		fmt.Fprintf(stderr, "gateway token: --workspace is required\nrun \"gateway token -h\" for its flags\n")
		return exitError(2)
	}
	if *issuer != "" {
		spec.issuer = *issuer
	}
	if *audience != "" {
		spec.audience = *audience
	}
	var secret, keyPEM []byte
	if *secretEnv != "" {
		s := env.get(*secretEnv)
		if s == "" {
			return fmt.Errorf("--secret-env: %s is not set; set it to the secret the gateway verifies with (hmac_secret_env)", *secretEnv)
		}
		secret = []byte(s)
		// The rule serve applies: never mint tokens with a secret the
		// gateway refuses.
		if err := authz.CheckHMACSecret(secret); err != nil {
			return fmt.Errorf("--secret-env %s: %w", *secretEnv, err)
		}
	} else {
		var err error
		if keyPEM, err = os.ReadFile(*keyFile); err != nil {
			return err
		}
	}
	tok, err := sign(spec.claims(time.Now()), secret, keyPEM)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	return nil
}

// workspaceMatches reports whether ws matches pattern; a pattern that
// does not compile matches nothing (validate has already said why).
func workspaceMatches(pattern, ws string) bool {
	re, err := regexp.Compile(pattern)
	return err == nil && re.MatchString(ws)
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
