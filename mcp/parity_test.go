package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/mcp"
)

// parityCatalog is a random catalog: random gates (some challenge on
// deny), tools on them, sensitive tools, claim prerequisites.
func parityCatalog(r *rand.Rand) (string, []string) {
	scopes := []string{"a", "b", "c", "d"}
	pick := func() string {
		var out []string
		for _, s := range scopes {
			if r.IntN(3) == 0 {
				out = append(out, s)
			}
		}
		if len(out) == 0 {
			out = []string{scopes[r.IntN(len(scopes))]}
		}
		return strings.Join(out, ", ")
	}
	var b strings.Builder
	b.WriteString("version: 1\nserver: { name: parity }\nauth:\n  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }\n  principal: { subject: sub, workspace: ws, scopes: scope }\ngates:\n")
	if r.IntN(2) == 0 {
		fmt.Fprintf(&b, "  view: { scopes: [%s] }\n", pick())
	}
	var gates []string
	for i := 0; i < 1+r.IntN(3); i++ {
		g := fmt.Sprintf("g%d", i)
		gates = append(gates, g)
		onDeny := ""
		if r.IntN(4) == 0 {
			onDeny = ", on_deny: challenge"
		}
		fmt.Fprintf(&b, "  %s: { scopes: [%s]%s }\n", g, pick(), onDeny)
	}
	if r.IntN(2) == 0 {
		fmt.Fprintf(&b, "sensitive_data: { gate: %s }\n", gates[r.IntN(len(gates))])
	}
	b.WriteString("prerequisites:\n  kb: { claim: features.kb }\nupstreams:\n  up: { base_url: \"${UP}\", timeout: 2s }\ntools:\n")
	var names []string
	for i := 0; i < 2+r.IntN(6); i++ {
		name := fmt.Sprintf("t%d", i)
		names = append(names, name)
		kind, gate := "read", "view"
		if r.IntN(3) == 0 {
			kind, gate = "write", gates[r.IntN(len(gates))]
		} else if r.IntN(2) == 0 {
			gate = gates[r.IntN(len(gates))]
		}
		fmt.Fprintf(&b, "  - { name: %s, description: tool, kind: %s, gate: %s, sensitive: %v", name, kind, gate, r.IntN(4) == 0)
		if r.IntN(3) == 0 {
			b.WriteString(", requires: [kb]")
		}
		b.WriteString(", request: { upstream: up, path: /v1/items/x } }\n")
	}
	return b.String(), names
}

func parityToken(t testing.TB, r *rand.Rand) string {
	var sc []string
	for _, s := range []string{"a", "b", "c", "d"} {
		if r.IntN(2) == 0 {
			sc = append(sc, s)
		}
	}
	now := time.Now()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss": "iss", "aud": "aud", "sub": fmt.Sprintf("u%d", r.IntN(1000)), "ws": "acme",
		"scope": strings.Join(sc, " "), "features": map[string]any{"kb": r.IntN(2) == 0},
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}).SignedString([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// surfaceView is what one surface showed one caller: the tools listed and
// whether each call was denied.
type surfaceView struct {
	listed []string
	denied map[string]bool
}

func deniedText(text string) bool { return strings.Contains(text, "is not available") }

func (e *env) mcpView(t *testing.T, tok string, isModern bool, tools []string) surfaceView {
	v := surfaceView{denied: map[string]bool{}}
	list := func() response {
		if isModern {
			body, hdr := modern(t, "1", "tools/list", "")
			hdr["Authorization"] = "Bearer " + tok
			return e.do(req{body: body, header: hdr})
		}
		return e.do(req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, header: map[string]string{"Authorization": "Bearer " + tok, "Mcp-Protocol-Version": "2025-11-25"}})
	}
	var lr struct{ Tools []struct{ Name string } }
	json.Unmarshal(list().result(t)["tools"], &lr.Tools)
	for _, tl := range lr.Tools {
		v.listed = append(v.listed, tl.Name)
	}
	for _, name := range tools {
		var r response
		if isModern {
			body, hdr := modern(t, "2", "tools/call", `"name":"`+name+`","arguments":{}`)
			hdr["Authorization"] = "Bearer " + tok
			r = e.do(req{body: body, header: hdr})
		} else {
			r = e.do(req{body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`, header: map[string]string{"Authorization": "Bearer " + tok, "Mcp-Protocol-Version": "2025-11-25"}})
		}
		if r.status == http.StatusForbidden {
			v.denied[name] = true
			continue
		}
		var res struct {
			Content []struct{ Text string }
			IsError bool
		}
		json.Unmarshal(r.result(t)["content"], &res.Content)
		v.denied[name] = len(res.Content) > 0 && deniedText(res.Content[0].Text)
	}
	return v
}

func (e *env) restView(t *testing.T, tok string, tools []string) surfaceView {
	v := surfaceView{denied: map[string]bool{}}
	r := e.do(req{method: http.MethodGet, path: "/admin/mcp/tools", header: map[string]string{"Authorization": "Bearer " + tok}})
	var lr []struct{ Name string }
	if err := json.Unmarshal(r.body, &lr); err != nil {
		t.Fatalf("REST tools %d %s", r.status, r.body)
	}
	for _, tl := range lr {
		v.listed = append(v.listed, tl.Name)
	}
	for _, name := range tools {
		r := e.do(req{path: "/admin/mcp/call", body: `{"name":"` + name + `","arguments":{}}`, header: map[string]string{"Authorization": "Bearer " + tok}})
		if r.status == http.StatusForbidden {
			v.denied[name] = true
			continue
		}
		var res struct {
			IsError bool   `json:"is_error"`
			Content string `json:"content"`
		}
		json.Unmarshal(r.body, &res)
		v.denied[name] = res.IsError && deniedText(res.Content)
	}
	return v
}

func (e *env) stdioView(t *testing.T, tok string, tools []string) surfaceView {
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"tools/list","params":{}}` + "\n")
	for i, name := range tools {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`+"\n", i+1, name)
	}
	pr, pw := io.Pipe()
	go func() {
		mcp.ServeStdio(context.Background(), strings.NewReader(in.String()), pw, &mcp.StdioOptions{State: e.current, Token: tok})
		pw.Close()
	}()
	v := surfaceView{denied: map[string]bool{}}
	sc := bufio.NewScanner(pr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct {
			ID     int
			Result struct {
				Tools   []struct{ Name string }
				Content []struct{ Text string }
			}
			Error *struct{ Code int }
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stdio line %q: %v", sc.Text(), err)
		}
		if m.ID == 0 {
			for _, tl := range m.Result.Tools {
				v.listed = append(v.listed, tl.Name)
			}
			continue
		}
		name := tools[m.ID-1]
		v.denied[name] = m.Error != nil && m.Error.Code == -31403 || len(m.Result.Content) > 0 && deniedText(m.Result.Content[0].Text)
	}
	return v
}

// TestListCallParityAcrossSurfaces: over random catalogs and callers, every
// surface and protocol era lists the same tools, and a tool is listed
// exactly when calling it is not denied.
func TestListCallParityAcrossSurfaces(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	var allowed, denied int
	src, tools := parityCatalog(r)
	e := newEnv(t, src)
	for i := 0; i < 40; i++ {
		if i > 0 {
			src, tools = parityCatalog(r)
			e.load(src)
		}
		for j := 0; j < 5; j++ {
			tok := parityToken(t, r)
			views := map[string]surfaceView{
				"mcp-modern": e.mcpView(t, tok, true, tools),
				"mcp-legacy": e.mcpView(t, tok, false, tools),
				"rest":       e.restView(t, tok, tools),
				"stdio":      e.stdioView(t, tok, tools),
			}
			want := views["mcp-legacy"].listed
			for surface, v := range views {
				if !slices.Equal(v.listed, want) {
					t.Fatalf("catalog %d: %s lists %v, mcp-legacy %v\n%s", i, surface, v.listed, want, src)
				}
				for _, name := range tools {
					if listed := slices.Contains(v.listed, name); listed == v.denied[name] {
						t.Fatalf("catalog %d, %s: %s listed=%v but denied=%v\n%s", i, surface, name, listed, v.denied[name], src)
					}
					if v.denied[name] {
						denied++
					} else {
						allowed++
					}
				}
			}
		}
	}
	// The random catalogs must exercise both sides of the decision.
	if allowed < 100 || denied < 100 {
		t.Errorf("only %d allowed and %d denied calls: the generator is too one-sided", allowed, denied)
	}
}
