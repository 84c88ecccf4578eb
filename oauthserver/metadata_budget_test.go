package oauthserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/gateway/oauthserver"
)

// A sign-in naming a client_id URL spends sign_in.per_minute before the
// document is fetched, so a stream of sign-ins naming distinct failing
// documents is budgeted like any other: it gets 429, not a fetch each.
func TestMetadataURLSignInsSpendTheBudget(t *testing.T) {
	var fetches atomic.Int64
	ds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer ds.Close()
	e := newEnvWith(t, 10, loopback, nil, func(s string) string {
		return strings.Replace(s, "access_token_ttl: 5m", "access_token_ttl: 5m\n    sign_in: { per_minute: 2 }", 1)
	})
	for i := range 50 {
		c := docClient(fmt.Sprintf("%s/junk/%d.json", ds.URL, i))
		resp, _ := newBrowser().do(t, "GET", e.authorizeURL(c, nil), nil)
		if resp.StatusCode == http.StatusTooManyRequests {
			t.Logf("429 after %d", i)
			return
		}
	}
	t.Errorf("50 sign-ins naming distinct failing documents with per_minute 2: %d outbound fetches, no 429", fetches.Load())
}

// A refresh or a revocation loads its client before reading the token
// it sends, and for a client_id that is a URL, loading is fetching: a
// stream of such requests naming distinct URLs, each behind a host that
// never answers, would hold every fetch slot and turn away the sign-ins
// of real clients. Those requests fetch nothing now unless the token is
// that client's; a document client still refreshes and revokes its own.
func TestRefreshAndRevocationFetchOnlyForTheirOwnTokens(t *testing.T) {
	var fetches atomic.Int64
	var docURL string
	ds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		if r.URL.Path != "/client.json" {
			http.Error(w, "no such client", http.StatusNotFound)
			return
		}
		fmt.Fprintf(w, `{"client_id":%q,"redirect_uris":["http://127.0.0.1:7777/callback"]}`, docURL)
	}))
	defer ds.Close()
	docURL = ds.URL + "/client.json"
	e := newEnv(t, 10, loopback)
	post := func(path string, form url.Values, basicUser string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, e.url+"/oauth"+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if basicUser != "" {
			req.SetBasicAuth(url.QueryEscape(basicUser), "")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for i := range 20 {
		id := fmt.Sprintf("%s/junk/%d.json", ds.URL, i)
		if code, body := post("/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {fmt.Sprintf("mcpgw_rt_junk%d", i)}, "client_id": {id}}, ""); code != http.StatusBadRequest || !strings.Contains(body, "invalid_grant") {
			t.Fatalf("a refresh with a made-up token: %d %s, want 400 invalid_grant", code, body)
		}
		if code, body := post("/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"junk"}}, id); code != http.StatusBadRequest || !strings.Contains(body, "invalid_grant") {
			t.Fatalf("a refresh naming its client in Basic credentials: %d %s, want 400 invalid_grant", code, body)
		}
		for _, token := range []string{fmt.Sprintf("mcpgw_rt_junk%d", i), "a.b.c", "junk"} {
			if code, body := post("/revoke", url.Values{"token": {token}, "client_id": {id}}, ""); code != http.StatusOK {
				t.Fatalf("revoking the made-up token %q: %d %s, want 200 (RFC 7009: as revoked)", token, code, body)
			}
		}
	}
	if n := fetches.Load(); n != 0 {
		t.Fatalf("refreshes and revocations with made-up tokens fetched %d client documents, want none", n)
	}

	// The document's own client: it signs in (one fetch), refreshes, and
	// revokes its token, which then no longer refreshes.
	c := docClient(docURL)
	first := e.signedIn(t, c)
	second := e.refresh(t, c, first.RefreshToken)
	if second.RefreshToken == "" {
		t.Fatalf("the document client's refresh: %+v", second)
	}
	if code, body := post("/revoke", url.Values{"token": {second.RefreshToken}, "client_id": {docURL}}, ""); code != http.StatusOK {
		t.Fatalf("the document client revoking its token: %d %s", code, body)
	}
	if r := e.refresh(t, c, second.RefreshToken); r.Error != "invalid_grant" {
		t.Errorf("a revoked refresh token refreshed: %+v", r)
	}
	if _, err := e.verify(t, second.AccessToken); err == nil {
		t.Errorf("the access token still verifies after its refresh token was revoked")
	}
}

// A document client whose document has gone (its URL answers 404 once
// the server's copy is stale) refreshing its token is refused as a client
// the server no longer knows, 401 invalid_client, not a server error.
func TestRefreshOfAClientWhoseDocumentIsGoneIsInvalidClient(t *testing.T) {
	var gone atomic.Bool
	var docURL string
	ds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gone.Load() {
			http.Error(w, "gone", http.StatusNotFound)
			return
		}
		fmt.Fprintf(w, `{"client_id":%q,"redirect_uris":["http://127.0.0.1:7777/callback"]}`, docURL)
	}))
	defer ds.Close()
	docURL = ds.URL + "/client.json"
	e, skew := clockedEnv(t, nil)
	c := docClient(docURL)
	tok := e.signedIn(t, c)
	gone.Store(true)
	skew.Store(int64(10 * time.Minute))
	r := e.refresh(t, c, tok.RefreshToken)
	if r.status != http.StatusUnauthorized || r.Error != "invalid_client" {
		t.Errorf("refresh by a client whose document is gone: %d %+v, want 401 invalid_client", r.status, r)
	}
}

// The library reads a request's parameters from r.Form, the body and the
// query together, and a parameter given twice as its last value (the
// grant type as its first): a client_id the gateway did not look at, in
// the query or as a second value, must fetch nothing either.
func TestRefreshAndRevocationFetchNothingForAClientIDInTheQueryOrGivenTwice(t *testing.T) {
	var mu sync.Mutex
	fetched := map[string]int{}
	ds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fetched[r.URL.Path]++
		mu.Unlock()
		http.Error(w, "no such client", http.StatusNotFound)
	}))
	defer ds.Close()
	e := newEnv(t, 10, loopback)
	send := func(method, path, query string, body string) (int, string) {
		req, _ := http.NewRequest(method, e.url+"/oauth"+path+"?"+query, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	q := url.QueryEscape
	cases := []struct{ name, method, path, query, body string }{
		{"refresh, client_id twice", "POST", "/token", "", "grant_type=refresh_token&refresh_token=mcpgw_rt_junk&client_id=plain&client_id=" + q(ds.URL+"/twice.json")},
		{"refresh, client_id in the query", "POST", "/token", "client_id=" + q(ds.URL+"/query.json"), "grant_type=refresh_token&refresh_token=mcpgw_rt_junk"},
		{"refresh, grant_type in the query", "POST", "/token", "grant_type=refresh_token", "refresh_token=mcpgw_rt_junk&client_id=" + q(ds.URL+"/grant-query.json")},
		{"refresh, all in the query of a GET", "GET", "/token", "grant_type=refresh_token&refresh_token=mcpgw_rt_junk&client_id=" + q(ds.URL+"/get.json"), ""},
		{"revocation, client_id twice", "POST", "/revoke", "", "token=mcpgw_rt_junk&client_id=plain&client_id=" + q(ds.URL+"/revoke-twice.json")},
		{"revocation, client_id in the query", "POST", "/revoke", "client_id=" + q(ds.URL+"/revoke-query.json"), "token=mcpgw_rt_junk"},
	}
	for _, c := range cases {
		code, body := send(c.method, c.path, c.query, c.body)
		mu.Lock()
		n := len(fetched)
		clear(fetched)
		mu.Unlock()
		if n != 0 {
			t.Errorf("%s: fetched a client document (answered %d %s), want no fetch", c.name, code, body)
		}
	}
}

// A spent refresh token is kept (to catch its reuse) with its grant
// only: sent again naming another client_id URL, it must not fetch that
// URL, and its grant is still revoked.
func TestASpentRefreshTokenFetchesNoOtherClientsDocument(t *testing.T) {
	var fetches atomic.Int64
	ds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		http.Error(w, "no such client", http.StatusNotFound)
	}))
	defer ds.Close()
	e := newEnv(t, 10, loopback)
	c := e.register(t, "http://127.0.0.1:7777/callback")
	first := e.signedIn(t, c)
	second := e.refresh(t, c, first.RefreshToken)
	if second.RefreshToken == "" {
		t.Fatalf("refresh: %+v", second)
	}
	// The same client_id in the query and the body reads the same either
	// way, and is not refused.
	resp, err := http.PostForm(e.url+"/oauth/token?client_id="+url.QueryEscape(c.id), url.Values{"grant_type": {"refresh_token"}, "refresh_token": {second.RefreshToken}, "client_id": {c.id}})
	if err != nil {
		t.Fatal(err)
	}
	var third tokenResponse
	json.NewDecoder(resp.Body).Decode(&third)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || third.RefreshToken == "" {
		t.Fatalf("a refresh naming its client_id in the query and the body: %d %+v", resp.StatusCode, third)
	}
	for i := range 20 {
		other := &client{id: fmt.Sprintf("%s/slow/%d.json", ds.URL, i)}
		if r := e.refresh(t, other, first.RefreshToken); r.Error != "invalid_grant" {
			t.Fatalf("the spent token naming another client: %d %+v, want invalid_grant", r.status, r)
		}
	}
	if n := fetches.Load(); n != 0 {
		t.Errorf("a spent refresh token naming 20 other client_id URLs fetched %d documents, want none", n)
	}
	if r := e.refresh(t, c, third.RefreshToken); r.Error != "invalid_grant" {
		t.Errorf("after the spent token's reuse its grant still refreshes: %+v", r)
	}
}

// A document client's spent refresh token sent again revokes its grant
// (reuse), and the client revokes an access token of its own.
func TestADocumentClientsReuseRevokesAndItRevokesItsAccessToken(t *testing.T) {
	var docURL string
	ds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"client_id":%q,"redirect_uris":["http://127.0.0.1:7777/callback"]}`, docURL)
	}))
	defer ds.Close()
	docURL = ds.URL + "/client.json"
	e := newEnv(t, 10, loopback)
	c := docClient(docURL)
	first := e.signedIn(t, c)
	second := e.refresh(t, c, first.RefreshToken)
	if second.RefreshToken == "" {
		t.Fatalf("refresh: %+v", second)
	}
	if r := e.refresh(t, c, first.RefreshToken); r.Error != "invalid_grant" {
		t.Fatalf("reuse: %+v, want invalid_grant", r)
	}
	if r := e.refresh(t, c, second.RefreshToken); r.Error != "invalid_grant" {
		t.Errorf("after reuse the grant still refreshes: %+v", r)
	}

	tok := e.signedIn(t, c)
	resp, err := http.PostForm(e.url+"/oauth/revoke", url.Values{"token": {tok.AccessToken}, "token_type_hint": {"access_token"}, "client_id": {docURL}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoking its access token: %d", resp.StatusCode)
	}
	if _, err := e.verify(t, tok.AccessToken); err == nil {
		t.Errorf("the access token still verifies after its revocation")
	}
	if r := e.refresh(t, c, tok.RefreshToken); r.Error != "invalid_grant" {
		t.Errorf("the grant still refreshes after its access token's revocation: %+v", r)
	}
}

// A document client whose document cannot be fetched right now (its host
// answers 503, or every fetch slot is taken) has not become unknown: its
// refresh is a server error it may retry, not invalid_client, on which
// MCP clients (the TypeScript SDK's auth()) throw away every credential
// and send the person to sign in again.
func TestRefreshWhileTheDocumentCannotBeFetchedNowIsNotInvalidClient(t *testing.T) {
	var down atomic.Bool
	release := make(chan struct{})
	var slow atomic.Int64
	var docURL string
	ds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/slow/") {
			slow.Add(1)
			<-release
			http.Error(w, "late", http.StatusNotFound)
			return
		}
		if down.Load() {
			http.Error(w, "try later", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, `{"client_id":%q,"redirect_uris":["http://127.0.0.1:7777/callback"]}`, docURL)
	}))
	defer ds.Close()
	defer close(release)
	docURL = ds.URL + "/client.json"
	e, skew := clockedEnv(t, nil)
	c := docClient(docURL)
	tok := e.signedIn(t, c)

	// The host answers 503 once the server's copy is stale.
	down.Store(true)
	skew.Store(int64(10 * time.Minute))
	r := e.refresh(t, c, tok.RefreshToken)
	if r.Error == "invalid_client" || r.status < 500 {
		t.Errorf("refresh while the document's host answers 503: %d %+v, want a server error", r.status, r)
	}

	// Every fetch slot is held by sign-ins naming documents that do not
	// answer; the client's copy is stale again.
	down.Store(false)
	skew.Store(int64(20 * time.Minute))
	for i := range 16 {
		other := docClient(fmt.Sprintf("%s/slow/%d.json", ds.URL, i))
		go func() {
			resp, err := http.Get(e.authorizeURL(other, nil))
			if err == nil {
				resp.Body.Close()
			}
		}()
	}
	for deadline := time.Now().Add(5 * time.Second); slow.Load() < 16; {
		if time.Now().After(deadline) {
			t.Fatalf("only %d slow fetches started", slow.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	r = e.refresh(t, c, tok.RefreshToken)
	if r.Error == "invalid_client" || r.status < 500 {
		t.Errorf("refresh while every fetch slot is taken: %d %+v, want a server error", r.status, r)
	}
}

// A refresh that names no client is the client's fault, not the
// server's: invalid_client, not a 500 server_error.
func TestRefreshWithoutAClientIDIsInvalidClient(t *testing.T) {
	e := newEnv(t, 10, loopback)
	r := e.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"mcpgw_rt_made_up"}})
	if r.status != http.StatusUnauthorized || r.Error != "invalid_client" {
		t.Errorf("a refresh without client_id: %d %+v, want 401 invalid_client", r.status, r)
	}
}

// A sign-in naming a client_id URL spends the sign-in budget before the
// document is fetched; naming a plain client_id first and the URL second
// (the library reads the last) must not fetch past the budget either.
func TestSignInsNamingClientIDTwiceSpendTheBudget(t *testing.T) {
	var fetches atomic.Int64
	ds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer ds.Close()
	e := newEnvWith(t, 10, loopback, nil, func(s string) string {
		return strings.Replace(s, "access_token_ttl: 5m", "access_token_ttl: 5m\n    sign_in: { per_minute: 2 }", 1)
	})
	for i := range 20 {
		c := docClient("plain")
		u := e.authorizeURL(c, nil) + "&client_id=" + url.QueryEscape(fmt.Sprintf("%s/junk/%d.json", ds.URL, i))
		resp, _ := newBrowser().do(t, "GET", u, nil)
		if resp.StatusCode == http.StatusTooManyRequests {
			return
		}
	}
	if n := fetches.Load(); n > 2 {
		t.Errorf("20 sign-ins naming client_id twice with per_minute 2: %d outbound fetches", n)
	}
}

// A document client revoking another client's token is refused, as a
// registered client is (RFC 7009 §2.1), and without fetching its own
// document: the token tells whose it is.
func TestRevokingAnotherClientsTokenIsRefusedWithoutAFetch(t *testing.T) {
	var otherFetches atomic.Int64
	var base string
	ds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/other.json" {
			otherFetches.Add(1)
		}
		fmt.Fprintf(w, `{"client_id":%q,"redirect_uris":["http://127.0.0.1:7777/callback"]}`, base+r.URL.Path)
	}))
	defer ds.Close()
	base = ds.URL
	e := newEnv(t, 10, loopback)
	c := docClient(base + "/client.json")
	tok := e.signedIn(t, c)
	for _, token := range []string{tok.RefreshToken, tok.AccessToken} {
		resp, err := http.PostForm(e.url+"/oauth/revoke", url.Values{"token": {token}, "client_id": {base + "/other.json"}})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "invalid_client") {
			t.Errorf("another client revoking this client's token: %d %s, want 401 invalid_client", resp.StatusCode, body)
		}
	}
	if _, err := e.verify(t, tok.AccessToken); err != nil {
		t.Errorf("a refused revocation ended the grant: %v", err)
	}
	if n := otherFetches.Load(); n != 0 {
		t.Errorf("the refused revocations fetched the other client's document %d times", n)
	}
}

// failingGets is a store whose reads fail while fail is set.
type failingGets struct {
	oauthserver.Store
	fail atomic.Bool
}

func (f *failingGets) Get(ctx context.Context, key string) ([]byte, error) {
	if f.fail.Load() {
		return nil, errors.New("store unreachable")
	}
	return f.Store.Get(ctx, key)
}

// While the store cannot be read, a refresh or a revocation naming a
// document client is a server error and fetches nothing: whether the
// token is that client's cannot be known, and the library could not
// read the token either.
func TestRefreshAndRevocationWhileTheStoreFailsFetchNothing(t *testing.T) {
	var fetches atomic.Int64
	ds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer ds.Close()
	e := newEnv(t, 10, loopback)
	store := &failingGets{Store: e.store}
	s, err := oauthserver.New(e.cat, &oauthserver.Options{Store: store, Keys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	store.fail.Store(true)
	for path, form := range map[string]url.Values{
		"/oauth/token":  {"grant_type": {"refresh_token"}, "refresh_token": {"mcpgw_rt_made_up"}, "client_id": {ds.URL + "/a.json"}},
		"/oauth/revoke": {"token": {"mcpgw_rt_made_up"}, "client_id": {ds.URL + "/b.json"}},
	} {
		resp, err := http.PostForm(srv.URL+path, form)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "server_error") {
			t.Errorf("%s while the store fails: %d %s, want 500 server_error", path, resp.StatusCode, body)
		}
	}
	if n := fetches.Load(); n != 0 {
		t.Errorf("requests made while the store failed fetched %d client documents", n)
	}
}

// docClient is a public client known by id (a metadata document's URL,
// usually) that returns to the loopback callback the documents in these
// tests list, with a PKCE verifier.
func docClient(id string) *client {
	return &client{id: id, redirect: "http://127.0.0.1:7777/callback", verifier: strings.Repeat("d", 43)}
}
