package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	runtimemetrics "runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/fleet"
	"github.com/mcpgw/gateway/oauthserver"
	"github.com/mcpgw/gateway/proxy"
)

// runtime owns what serves requests and swaps it whole on reload: a
// request takes one snapshot and finishes on it, so in-flight calls are
// never cut by a reload.
type runtime struct {
	env     lookupEnv
	logger  *slog.Logger
	metrics *metrics
	// load reads and validates the catalog; nil for a catalog that cannot
	// change (the demo's embedded one).
	load func() (*catalog.Catalog, error)
	path string // the catalog file, for watching; "" when there is none
	// tracer records spans when an exporter is configured; nil otherwise.
	tracer trace.Tracer
	// auditLog receives audit records when audit.path is unset; it writes
	// each record out before the reply. Nil: logger.
	auditLog *slog.Logger

	cur     atomic.Pointer[state]
	reloads atomic.Int64 // successful reloads after the first load
	// lastReload is the outcome of the last load (the first install, then
	// each reload), for /status; nil before the first.
	lastReload atomic.Pointer[reloadOutcome]

	mu sync.Mutex // serializes reloads
	// read is what the last successful load of the catalog file read
	// from the environment; guarded by mu.
	read envRead
	// audits holds one trail per audit file, kept across reloads so a file
	// is opened once and its health is tracked for the process's life;
	// logTrail is the trail over the log stream.
	audits   map[string]*fileTrail
	logTrail *proxy.AuditTrail
	// approvals is shared by every core, made on the first install.
	approvals *proxy.Approvals
	// oauthStore and oauthKeys are the authorization server's state and
	// signing secrets, made on the first install that needs them.
	oauthStore oauthserver.Store
	oauthKeys  [][]byte
	// fleet counts limits, in Redis when one is configured; made once
	// (openFleet) and shared by every core and surface.
	fleetOnce sync.Once
	fleet     *fleet.Limiter
	fleetErr  error
}

// fileTrail is an audit file and the trail that watches it.
type fileTrail struct {
	file  *proxy.FileAudit
	trail *proxy.AuditTrail
}

// reloadOutcome is how the last load went (after a failed
// reload the old catalog serves on, and an operator must be able to see
// that the file on disk is not the one serving).
type reloadOutcome struct {
	ok  bool
	at  time.Time
	err string // "" when ok
}

// recordReload notes a load's outcome in /status and the metrics.
func (rt *runtime) recordReload(err error) {
	o := &reloadOutcome{ok: err == nil, at: time.Now()}
	if err != nil {
		o.err = err.Error()
	}
	rt.lastReload.Store(o)
	rt.metrics.lastReload(o.ok, o.at)
}

// state is one loaded catalog with everything built from it.
type state struct {
	core     *proxy.Core
	verifier authz.ClosableVerifier
	as       *oauthserver.Server // nil without auth.oauth_server
}

func newRuntime(env lookupEnv, logger *slog.Logger, m *metrics) *runtime {
	rt := &runtime{env: env, logger: logger, metrics: m, audits: map[string]*fileTrail{}}
	breakers := func() []proxy.BreakerState {
		if core, _ := rt.snapshot(); core != nil {
			return core.Breakers()
		}
		return nil
	}
	m.breakers.state.Store(&breakers)
	return rt
}

// loadRuntime makes a runtime for the catalog file at path and loads it
// once; every problem is logged with its position.
func loadRuntime(path string, env lookupEnv, logger, auditLog *slog.Logger) (*runtime, *catalog.Catalog, error) {
	rt := newRuntime(env, logger, newMetrics())
	rt.auditLog = auditLog
	rt.path = path
	rt.load = rt.fileLoader(path)
	cat, err := rt.load()
	if err != nil {
		logProblems(logger, err)
		return nil, nil, fmt.Errorf("catalog %s does not load", path)
	}
	for _, w := range cat.Warnings {
		logger.Warn("catalog warning", "warning", w)
	}
	return rt, cat, nil
}

// envRead is the catalog a load made and every variable it looked up,
// with what it found.
type envRead struct {
	cat  *catalog.Catalog
	vars map[string]envValue
}

type envValue struct {
	v  string
	ok bool
}

// fileLoader returns a load function for the catalog file at path that
// notes in rt.read the variables each successful load looked up, so that
// a reload can tell nothing the serving catalog was made from changed
// (unchangedCatalog).
func (rt *runtime) fileLoader(path string) func() (*catalog.Catalog, error) {
	return func() (*catalog.Catalog, error) {
		var mu sync.Mutex
		vars := map[string]envValue{}
		cat, err := catalog.Load(path, &catalog.LoadOptions{Getenv: func(k string) (string, bool) {
			v, ok := rt.env(k)
			mu.Lock()
			vars[k] = envValue{v, ok}
			mu.Unlock()
			return v, ok
		}})
		if err == nil {
			rt.read = envRead{cat: cat, vars: vars}
		}
		return cat, err
	}
}

// unchangedCatalog returns the serving catalog when a load now would make
// the same one: the file holds the same bytes, it includes no fragments,
// and every variable it read has the value it had. A SIGHUP sent to
// rotate logs or credential files then rebuilds everything else from the
// catalog without parsing it again beside the one serving, which for a
// catalog of thousands of tools holds as much again while it lasts.
// Called with rt.mu held.
func (rt *runtime) unchangedCatalog() *catalog.Catalog {
	s := rt.cur.Load()
	if s == nil || rt.read.cat == nil || rt.read.cat != s.core.Catalog() {
		return nil
	}
	cat := rt.read.cat
	if len(cat.Include) > 0 || len(cat.Files) > 0 || fileHash(rt.path) != cat.Hash {
		return nil
	}
	for k, was := range rt.read.vars {
		if v, ok := rt.env(k); v != was.v || ok != was.ok {
			return nil
		}
	}
	return cat
}

// snapshot returns the current core and verifier; nil before the first load.
func (rt *runtime) snapshot() (*proxy.Core, authz.Verifier) {
	s := rt.cur.Load()
	if s == nil {
		return nil, nil
	}
	return s.core, s.verifier
}

// install builds a state for cat and makes it current.
func (rt *runtime) install(cat *catalog.Catalog) error {
	var v authz.ClosableVerifier
	var err error
	if cat.Auth.JWT != nil || cat.Auth.APIKeysFile != "" {
		if v, err = authz.NewVerifier(cat.Auth, rt.verifierOptions()); err != nil {
			return err
		}
	}
	as, err := rt.oauthServerFor(cat)
	if err != nil {
		if v != nil {
			closeVerifier(v)
		}
		return fmt.Errorf("auth.oauth_server: %w", err)
	}
	if as != nil {
		v = federated(as, v)
	}
	opts := &proxy.Options{Logger: rt.logger, Getenv: rt.env.get, Metrics: rt.metrics.proxy(), Tracer: rt.tracer}
	if opts.Fleet, err = rt.openFleet(); err != nil {
		closeVerifier(v)
		return err
	}
	if p := cat.Audit.Path; p != "" {
		a := rt.audits[p]
		if a == nil {
			f, err := proxy.OpenFileAudit(p, &proxy.FileAuditOptions{Fsync: cat.Audit.Fsync})
			if err != nil {
				closeVerifier(v)
				return fmt.Errorf("audit.path: %w", err)
			}
			a = &fileTrail{file: f, trail: proxy.NewAuditTrail(f, rt.logger, rt.metrics.audit())}
			rt.audits[p] = a
		}
		a.file.SetFsync(cat.Audit.Fsync)
		opts.Audit = a.trail
	} else {
		if rt.logTrail == nil {
			logger := rt.auditLog
			if logger == nil {
				logger = rt.logger
			}
			rt.logTrail = proxy.NewAuditTrail(&proxy.LogAudit{Logger: logger}, rt.logger, rt.metrics.audit())
		}
		opts.Audit = rt.logTrail
	}
	if opts.Approvals, err = rt.approvalsFor(cat); err != nil {
		closeVerifier(v)
		return fmt.Errorf("approvals: %w", err)
	}
	core, err := proxy.New(cat, opts)
	if err != nil {
		closeVerifier(v)
		return err
	}
	old := rt.cur.Swap(&state{core: core, verifier: v, as: as})
	rt.metrics.catalogLoaded(cat.Hash)
	if old != nil {
		closeVerifier(old.verifier)
	} else {
		rt.recordReload(nil) // the first load counts as the last reload until there is one
	}
	// Loading a large catalog makes several times its size in garbage
	// (YAML nodes, schema compilation); give it back now rather than
	// carrying it as idle RSS.
	go debug.FreeOSMemory()
	return nil
}

func closeVerifier(v authz.ClosableVerifier) { v.Close() }

// reloadMemoryFactor bounds what a reload may hold on top of what the
// serving catalog holds, as a multiple of the memory in use before it.
const reloadMemoryFactor = 1.5

// holdMemoryNear sets a soft memory limit of factor times the memory the
// process uses (its garbage left out) until the returned function is
// called, which puts back the limit there was. A reload parses and checks
// the new catalog while the old one serves: with the collector's default
// pacing, the garbage of the load alone let the process grow to two or
// three times its steady size. The limit is soft: when what is live
// exceeds it, the collector works harder (at most half the CPU, Go's
// own cap) and memory grows past it rather than failing. A lower limit
// already set (GOMEMLIMIT) is kept.
func holdMemoryNear(factor float64) (restore func()) {
	s := []runtimemetrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}
	runtimemetrics.Read(s)
	for _, x := range s {
		if x.Value.Kind() != runtimemetrics.KindUint64 {
			return func() {}
		}
	}
	used := s[0].Value.Uint64() - s[1].Value.Uint64() - s[2].Value.Uint64()
	if objects, live := s[3].Value.Uint64(), s[4].Value.Uint64(); objects > live {
		used -= objects - live // garbage not yet collected
	}
	limit := int64(float64(used) * factor)
	prev := debug.SetMemoryLimit(-1)
	if limit >= prev {
		return func() {}
	}
	debug.SetMemoryLimit(limit)
	return func() { debug.SetMemoryLimit(prev) }
}

// reload loads the catalog again and swaps it in when it is valid and
// different, or valid and force is set (SIGHUP: files and secrets the
// catalog names, such as an API keys file, may have changed while its own
// bytes did not). Otherwise the current one keeps serving and every problem
// is logged with its position.
func (rt *runtime) reload(reason string, force bool) error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if force {
		// SIGHUP also reopens audit files, for log rotation.
		for path, a := range rt.audits {
			if err := a.file.Reopen(); err != nil {
				rt.logger.Error("audit file cannot be reopened; write calls are refused until it can", "path", path, "error", err)
			}
		}
	}
	if rt.load == nil {
		return nil
	}
	defer holdMemoryNear(reloadMemoryFactor)()
	var cat *catalog.Catalog
	if force {
		cat = rt.unchangedCatalog()
	}
	if cat == nil {
		var err error
		if cat, err = rt.load(); err != nil {
			logProblems(rt.logger, err)
			rt.reloadFailed(reason, err)
			return err
		}
	}
	if s := rt.cur.Load(); !force && s != nil && s.core.Catalog().Hash == cat.Hash {
		rt.recordReload(nil) // the file is valid and is the one serving
		return nil
	}
	if err := rt.install(cat); err != nil {
		rt.reloadFailed(reason, err)
		return err
	}
	rt.reloads.Add(1)
	rt.metrics.reload("ok")
	rt.recordReload(nil)
	rt.logger.Info("catalog reloaded", "reason", reason, "catalog", cat.File, "hash", cat.Hash, "tools", len(cat.Tools))
	return nil
}

// reloadFailed counts, records and logs a failed reload in one line that
// says which catalog keeps serving and which file was refused.
func (rt *runtime) reloadFailed(reason string, err error) {
	rt.metrics.reload("error")
	rt.recordReload(err)
	serving := ""
	if s := rt.cur.Load(); s != nil {
		serving = s.core.Catalog().Hash
	}
	rt.logger.Error("catalog reload failed; keeping the current catalog", "reason", reason, "catalog", rt.path,
		"serving_hash", serving, "disk_hash", fileHash(rt.path), "error", err.Error())
}

func logProblems(logger *slog.Logger, err error) {
	var le *catalog.LoadError
	if errors.As(err, &le) {
		for _, p := range le.Problems {
			logger.Error("catalog problem", "problem", p.String())
		}
		return
	}
	logger.Error("catalog problem", "problem", err.Error())
}

// watch reloads when the catalog file changes, debounced. It watches the
// directory, so editors that replace the file and Kubernetes ConfigMaps
// (which swap a symlink) are both seen. It returns when ctx ends.
func (rt *runtime) watch(ctx context.Context, debounce time.Duration) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	if err := w.Add(filepath.Dir(rt.path)); err != nil {
		return err
	}
	watchIncluded(w, rt.includedFiles())
	last := sourcesHash(rt.path, rt.includedFiles())
	var timer *time.Timer
	fire := make(chan struct{}, 1)
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			if timer == nil {
				timer = time.AfterFunc(debounce, func() {
					select {
					case fire <- struct{}{}:
					default:
					}
				})
			} else {
				timer.Reset(debounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			rt.logger.Warn("catalog watch error", "error", err)
		case <-fire:
			// Any change in the directory lands here; only a change of the
			// catalog's bytes is a reload.
			if h := sourcesHash(rt.path, rt.includedFiles()); h != "" && !bytes.Equal([]byte(h), []byte(last)) {
				rt.reload("file changed", false)
				// A reload may change which fragments are included.
				watchIncluded(w, rt.includedFiles())
				last = sourcesHash(rt.path, rt.includedFiles())
			}
		}
	}
}

func fileHash(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func (rt *runtime) verifierOptions() *authz.VerifierOptions {
	return &authz.VerifierOptions{Getenv: rt.env.get, Logger: rt.logger, OnJWKSFetch: rt.metrics.jwksFetch}
}
