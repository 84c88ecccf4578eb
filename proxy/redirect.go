package proxy

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// This file is where a built request is sent: which redirects one call
// follows (none that leave the upstream, its base path, or the tool's own
// path), and send, the one place a request goes out.

// redirectPolicy says which redirects one call follows. A
// redirect it does not follow comes back as the answer itself: a 3xx,
// which the call reports as a tool error naming the status and why.
type redirectPolicy struct {
	never  string // when set, no redirect is followed, for this reason
	prefix string // the escaped path a followed redirect must stay under, base path included
	whole  bool   // prefix is the call's whole path: the target is it or below it
}

// redirects is the policy for a call to path. Writes never follow: a
// redirected DELETE or POST could land elsewhere or turn into a GET, and
// be recorded as done. Reads follow only when the upstream opts in, and
// only under the path the catalog and the token fixed for the call.
func (u *upstream) redirects(write bool, p builtPath) redirectPolicy {
	switch {
	case write:
		return redirectPolicy{never: "writes never follow redirects"}
	case !u.def.FollowRedirects:
		return redirectPolicy{never: "the upstream does not set follow_redirects"}
	}
	return redirectPolicy{prefix: u.basePath + p.escaped[:p.fixed], whole: p.whole}
}

// refuse says why the redirect from req to loc, after hops redirects, is
// not followed, or "" to follow it to next.
func (u *upstream) refuse(pol redirectPolicy, req *http.Request, loc string, hops int) (next *url.URL, why string) {
	switch {
	case pol.never != "":
		return nil, pol.never
	case loc == "":
		return nil, "it has no Location"
	}
	next, err := req.URL.Parse(loc)
	switch {
	case err != nil:
		return nil, "its Location cannot be parsed"
	case next.Scheme+"://"+next.Host != u.origin || next.User != nil:
		return nil, "it leads to another origin"
	case !pol.within(next.EscapedPath()):
		return nil, "it leads outside the tool's path"
	case hops >= maxRedirects:
		return nil, fmt.Sprintf("more than %d redirects in a row", maxRedirects)
	}
	return next, ""
}

// within reports whether an escaped target path stays under the policy's
// prefix however a server reads it: as sent (escapes compared without
// regard to hex case), and after each of up to maxDecodes percent-decodings,
// each cleaned of dot segments with "\" taken as "/". A segment that
// is a dot segment before a ";" parameter (Tomcat) is refused too.
func (pol redirectPolicy) within(target string) bool {
	if !underPath(cleanPath(upperEscapes(target)), cleanPath(upperEscapes(pol.prefix)), pol.whole) {
		return false
	}
	t, pre := target, pol.prefix
	for level := 1; level <= maxDecodes; level++ {
		d, changed := percentDecode(t)
		if !changed {
			return true
		}
		t = d
		pre, _ = percentDecode(pre)
		if !underPath(cleanPath(t), cleanPath(pre), pol.whole) {
			return false
		}
	}
	_, changed := percentDecode(t)
	return !changed
}

// underPath reports whether the clean path t lies under p. A prefix (the
// literal before the first argument, "/jobs/" of "/jobs/{id}" or "/jobs-"
// of "/jobs-{id}") is matched as text, and t must extend it, as a value
// would; a whole path (no argument in it) as a directory: t is p or below
// it. A dot segment before a ";" parameter (Tomcat) is never under.
func underPath(t, p string, whole bool) bool {
	for _, seg := range strings.Split(t, "/") {
		if i := strings.IndexByte(seg, ';'); i >= 0 {
			seg = seg[:i]
		}
		if seg == "." || seg == ".." {
			return false
		}
	}
	if !whole {
		return len(t) > len(p) && strings.HasPrefix(t, p)
	}
	return t == p || strings.HasPrefix(t, strings.TrimSuffix(p, "/")+"/")
}

// cleanPath is p with "\" read as "/" and dot segments resolved, keeping
// a trailing slash, as the servers that clean paths do.
func cleanPath(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if strings.HasSuffix(p, "/") && np != "/" {
		np += "/"
	}
	return np
}

// upperEscapes writes every %xx escape of s in upper case.
func upperEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' && ishex(b[i+1]) && ishex(b[i+2]) {
			b[i+1], b[i+2] = upperHex(b[i+1]), upperHex(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func upperHex(c byte) byte {
	if 'a' <= c && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// send performs req on the transport and follows the redirects pol allows,
// as net/http's client would (301, 302 and 303 turn a non-GET into a
// body-less GET; 307 and 308 keep method and body). Every header set on
// req, credentials included, goes to each hop: all hops are the upstream's
// own origin. A redirect not followed is returned as the answer, with
// notFollowed saying why.
//
// Using the transport directly, as httputil.ReverseProxy does, spares
// every call the client's per-request header copying for redirects.
func (u *upstream) send(req *http.Request, pol redirectPolicy) (resp *http.Response, notFollowed string, err error) {
	for hops := 0; ; hops++ {
		resp, err := u.rt.RoundTrip(req)
		if err != nil {
			return nil, "", err
		}
		if !isRedirect(resp.StatusCode) {
			return resp, "", nil
		}
		next, why := u.refuse(pol, req, resp.Header.Get("Location"), hops)
		if why != "" {
			return resp, why, nil
		}
		// Drain a little so the connection can be reused, then let go.
		io.CopyN(io.Discard, resp.Body, 4<<10)
		resp.Body.Close()
		// The token's workspace binding goes to every hop, as the headers
		// do: a Location that drops or names another workspace must not
		// change whose data is asked for.
		if w := u.def.Workspace; w != nil && w.Query != "" {
			q := next.Query()
			dropField(q, w.Query)
			q[w.Query] = req.URL.Query()[w.Query]
			next.RawQuery = q.Encode()
		}
		nreq := req.Clone(req.Context())
		nreq.URL, nreq.Host = next, ""
		keepBody := resp.StatusCode == http.StatusTemporaryRedirect || resp.StatusCode == http.StatusPermanentRedirect
		if !keepBody && req.Method != http.MethodGet && req.Method != http.MethodHead {
			nreq.Method = http.MethodGet
		}
		switch {
		case keepBody && req.GetBody != nil:
			if nreq.Body, err = req.GetBody(); err != nil {
				return nil, "", err
			}
		case keepBody:
			nreq.Body = req.Body // http.NoBody
		default:
			nreq.Body, nreq.ContentLength, nreq.GetBody = http.NoBody, 0, nil
			nreq.Header.Del("Content-Type")
		}
		req = nreq
	}
}
