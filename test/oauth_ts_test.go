package test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// loopbackCert writes a self-signed certificate for 127.0.0.1 and its
// key; the gateway trusts it through SSL_CERT_FILE, so a Client ID
// Metadata Document can be served over https on loopback.
func loopbackCert(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600)
	return certFile, keyFile
}

type tsOAuthReport struct {
	Registered string
	Asked      bool
	Tools      []string
	Call       struct {
		IsError bool
		Text    string
	}
	Refreshed              bool
	Revoked                int
	RefusedAfterRevocation bool
	Refusal                string
}

// runTSOAuth runs test/ts/oauth.mjs and signs user in with Chromium
// when it asks for a browser.
func runTSOAuth(t *testing.T, ctx context.Context, mcpURL, user, password string, env ...string) tsOAuthReport {
	t.Helper()
	_, port, _ := net.SplitHostPort(freeAddr(t))
	cmd := exec.Command("node", "ts/oauth.mjs")
	cmd.Env = append(append(os.Environ(), "GATEWAY_MCP_URL="+mcpURL, "CALLBACK_PORT="+port), env...)
	stdout, _ := cmd.StdoutPipe()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	var rep tsOAuthReport
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		cmd.Wait()
		close(done)
	}()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case <-timeout:
			t.Fatalf("the TypeScript client did not finish; stderr:\n%s", stderr.String())
		case line, ok := <-lines:
			if !ok {
				<-done
				if cmd.ProcessState.ExitCode() != 0 {
					t.Fatalf("node oauth.mjs exited %d; stderr:\n%s", cmd.ProcessState.ExitCode(), stderr.String())
				}
				return rep
			}
			var step struct {
				Open  string
				Error string
			}
			json.Unmarshal([]byte(line), &step)
			if step.Error != "" {
				t.Fatalf("TypeScript client: %s", step.Error)
			}
			json.Unmarshal([]byte(line), &rep)
			if step.Open != "" && !rep.RefusedAfterRevocation && rep.Tools == nil {
				browserSignIn(t, ctx, step.Open, user, password)
			}
		}
	}
}

// browserSignIn opens the authorization URL in Chromium, consents, and
// signs in at the provider's own login page.
func browserSignIn(t *testing.T, ctx context.Context, authorize, user, password string) {
	t.Helper()
	if _, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatalf("clear cookies: %v", err)
	}
	step, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	err := chromedp.Do(step,
		chromedp.Navigate(authorize),
		chromedp.WaitVisible(chromedp.CSS("#allow")),
		chromedp.Click(chromedp.CSS("#allow")),
		chromedp.WaitVisible(chromedp.CSS("#username")),
		chromedp.SendKeys(chromedp.CSS("#username"), user),
		chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#done")),
	)
	if err != nil {
		t.Fatalf("sign in as %s in Chromium: %v", user, err)
	}
}

// TestTypeScriptSDKSignsInAtTheProviderInChromium: the official
// TypeScript SDK's OAuth client, with no token, gets the 401, discovers
// the metadata, registers with a Client ID Metadata Document (alice, of
// acme) and with dynamic registration (bob, of globex), sends the person
// to the provider in headless Chromium, lists and calls the tools of
// that person's workspace, refreshes, and is refused after revocation.
func TestTypeScriptSDKSignsInAtTheProviderInChromium(t *testing.T) {
	if _, err := os.Stat("ts/node_modules/@modelcontextprotocol/sdk"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the TypeScript SDK is not installed in test/ts (run npm ci there): %v", err)
		}
		t.Skip("test/ts/node_modules missing; run `npm ci --prefix test/ts`")
	}
	ctx := browser(t)
	cert, key := loopbackCert(t)
	g, _ := oauthGateway(t, "SSL_CERT_FILE="+cert)
	cimd := "https://" + freeAddr(t) + "/oauth/client.json"

	alice := runTSOAuth(t, ctx, g.MCP, "alice", "alice-pw", "CIMD_URL="+cimd, "CIMD_CERT="+cert, "CIMD_KEY="+key)
	bob := runTSOAuth(t, ctx, g.MCP, "bob", "bob-pw")
	if alice.Registered != cimd || !alice.Asked {
		t.Errorf("alice's client registered as %q (asked for a browser: %v), want its metadata document %s", alice.Registered, alice.Asked, cimd)
	}
	if !strings.HasPrefix(bob.Registered, "mcpgw_c_") {
		t.Errorf("bob's client registered as %q, want a dynamically registered id", bob.Registered)
	}
	if !slices.Contains(alice.Tools, "knowledge_search") || slices.Contains(bob.Tools, "knowledge_search") || len(bob.Tools) == 0 {
		t.Errorf("alice (acme) sees %v, bob (globex) sees %v: want acme's knowledge_search for alice only", alice.Tools, bob.Tools)
	}
	for who, r := range map[string]tsOAuthReport{"alice": alice, "bob": bob} {
		if r.Call.IsError || r.Call.Text == "" {
			t.Errorf("%s's list_queues: %+v", who, r.Call)
		}
		// The SDK meets the 401, tries the revoked refresh token, and
		// is told invalid_grant.
		if !r.Refreshed || r.Revoked != 200 || !r.RefusedAfterRevocation || !strings.Contains(r.Refusal, "invalid_grant") && !strings.Contains(r.Refusal, "InvalidGrant") {
			t.Errorf("%s: refreshed %v, revoke %d, refused after revocation %v (%s)", who, r.Refreshed, r.Revoked, r.RefusedAfterRevocation, r.Refusal)
		}
	}
	if strings.Contains(alice.Call.Text, "globex") || strings.Contains(bob.Call.Text, "acme") {
		t.Errorf("a call answered another workspace's data:\nalice %s\nbob %s", alice.Call.Text, bob.Call.Text)
	}
}
