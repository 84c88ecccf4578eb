package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"time"
)

// upstreamToken is the credential the gateway's catalog sends upstream and
// the direct and hop clients send themselves, so the upstream does the same
// work for every target.
const upstreamToken = "bench-upstream-token"

// Sizes of the upstream's answers.
const (
	listItems = 100     // GET /list: 100 items, about 30 KiB
	hugeBytes = 2 << 20 // GET /huge: at least 2 MiB of items
)

// runUpstream is the hidden "upstream" subcommand: the minimal REST service
// every target ends at. It prints "listening URL" on stdout once it
// accepts connections and serves until it is killed.
func runUpstream(args []string) error {
	fs := flag.NewFlagSet("upstream", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "listen address")
	streamBytes := fs.Int64("stream-bytes", 1<<30, "most bytes GET /stream sends")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return serveOn(*listen, newUpstream(*streamBytes))
}

// runHop is the hidden "hop" subcommand: a bare httputil.ReverseProxy in
// front of -target, the floor cost of one Go proxy hop. Its transport pools
// as many idle connections per host as the gateway's (256), so neither
// pays for dialing under load.
func runHop(args []string) error {
	fs := flag.NewFlagSet("hop", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "listen address")
	target := fs.String("target", "", "upstream base URL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	u, err := url.Parse(*target)
	if err != nil || u.Host == "" {
		return fmt.Errorf("hop: -target %q is not an absolute URL", *target)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.MaxIdleConns = 1024
	tr.MaxIdleConnsPerHost = 256
	rp := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(u) },
		Transport: tr,
		ErrorLog:  log.New(io.Discard, "", 0),
	}
	return serveOn(*listen, rp)
}

func serveOn(addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("listening http://%s\n", ln.Addr())
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	return srv.Serve(ln)
}

// upstream serves fixed JSON answers, built once:
//
//	GET  /small   one record, about 300 B
//	GET  /list    {"items": [100 records], "total": 100}, about 30 KiB
//	GET  /huge    {"items": [...]}, at least 2 MiB
//	POST /write   reads a small JSON body, answers a small JSON object
//	GET  /stream  {"items": [...]} of up to stream-bytes, chunked, until
//	              the client goes away
//
// Every request must carry the upstream token and X-Workspace-Id; a write
// must carry X-Actor.
type upstream struct {
	small, list, huge, write []byte
	chunk                    []byte // /stream: whole records, ending with ','
	streamBytes              int64
}

func newUpstream(streamBytes int64) *upstream {
	u := &upstream{streamBytes: streamBytes}
	u.small = record(1)
	var b bytes.Buffer
	b.WriteString(`{"items":[`)
	for i := range listItems {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(record(i + 1))
	}
	b.WriteString(`],"total":` + strconv.Itoa(listItems) + `}`)
	u.list = bytes.Clone(b.Bytes())
	b.Reset()
	b.WriteString(`{"items":[`)
	for i := 0; b.Len() < hugeBytes; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(record(i + 1))
	}
	b.WriteString(`]}`)
	u.huge = bytes.Clone(b.Bytes())
	u.write = []byte(`{"ok":true,"id":"wr-0001","state":"accepted","message":"recorded"}`)
	b.Reset()
	for i := 0; b.Len() < 32<<10; i++ {
		b.Write(record(i + 1))
		b.WriteByte(',')
	}
	u.chunk = bytes.Clone(b.Bytes())
	return u
}

// record is one item of about 300 bytes of JSON.
func record(i int) []byte {
	return fmt.Appendf(nil, `{"id":"item-%06d","name":"Item %d","state":"Succeeded","queue":"default","attempt":1,"maxAttempts":3,`+
		`"tags":["region=eu","tier=gold"],"createdAt":"2026-01-02T03:04:05Z","finishedAt":"2026-01-02T03:05:06Z",`+
		`"note":"a short free-text note that pads this record to roughly three hundred bytes."}`, i, i)
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+upstreamToken {
		http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
		return
	}
	if r.Header.Get("X-Workspace-Id") == "" {
		http.Error(w, `{"error":"missing X-Workspace-Id"}`, http.StatusBadRequest)
		return
	}
	switch r.Method + " " + r.URL.Path {
	case "GET /small":
		fixed(w, u.small)
	case "GET /list":
		fixed(w, u.list)
	case "GET /huge":
		fixed(w, u.huge)
	case "POST /write":
		if r.Header.Get("X-Actor") == "" {
			http.Error(w, `{"error":"missing X-Actor"}`, http.StatusBadRequest)
			return
		}
		if _, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, 64<<10)); err != nil {
			http.Error(w, `{"error":"bad body"}`, http.StatusBadRequest)
			return
		}
		fixed(w, u.write)
	case "GET /stream":
		u.stream(w, r)
	default:
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
	}
}

func fixed(w http.ResponseWriter, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// stream writes records as fast as the client reads them, up to
// streamBytes, and stops at the first failed write (the client went away).
func (u *upstream) stream(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if _, err := io.WriteString(w, `{"items":[`); err != nil {
		return
	}
	for sent := int64(0); sent < u.streamBytes; sent += int64(len(u.chunk)) {
		if r.Context().Err() != nil {
			return
		}
		if _, err := w.Write(u.chunk); err != nil {
			return
		}
	}
	_, _ = io.WriteString(w, `{}]}`)
}

// subcommand runs a hidden subcommand when os.Args names one.
func subcommand() (bool, error) {
	if len(os.Args) < 2 {
		return false, nil
	}
	switch os.Args[1] {
	case "upstream":
		return true, runUpstream(os.Args[2:])
	case "hop":
		return true, runHop(os.Args[2:])
	case "sdk":
		return true, runSDK(os.Args[2:])
	}
	return false, nil
}

var errNotReady = errors.New("child did not report its URL")
