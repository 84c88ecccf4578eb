package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gateway "github.com/mcpgw/gateway"
)

// TestTokenRefusesWeakSecrets: `gateway token` never signs with a secret
// `serve` would refuse, so a developer cannot mint tokens the gateway
// then rejects, nor get used to a guessable secret (issue 9).
func TestTokenRefusesWeakSecrets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	os.WriteFile(path, gateway.DefaultCatalog, 0o600)
	for name, s := range map[string]string{
		"32-times-a": strings.Repeat("a", 32),
		"digit-run":  strings.Repeat("0123456789", 4),
		"short":      "too-short",
	} {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(context.Background(), []string{"token", "--catalog", path, "--sub", "dev", "--workspace", "acme", "--secret-env", "WEAK"},
				nil, &out, &errb, testEnv(map[string]string{"WEAK": s}))
			if err == nil {
				t.Fatalf("token signed with the secret %q: %s", s, out.String())
			}
			if out.Len() != 0 {
				t.Errorf("token printed %q despite the error", out.String())
			}
			if msg := err.Error() + errb.String(); !strings.Contains(msg, "WEAK") || strings.Contains(msg, s) {
				t.Errorf("token error %q: want it to name WEAK and not quote the secret", msg)
			}
		})
	}
}
