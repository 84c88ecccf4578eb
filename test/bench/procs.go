package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// envGeneratorCPU marks the harness as already re-executed under taskset.
const envGeneratorCPU = "BENCH_GENERATOR_CPU"

// pinSelf re-executes the harness under "taskset -c cpu", so every thread
// of the load generator, and the Go runtime's GOMAXPROCS, see one CPU. It
// returns only when the harness already runs pinned (or on failure).
func pinSelf(cpu string) error {
	if os.Getenv(envGeneratorCPU) != "" {
		return nil
	}
	ts, err := exec.LookPath("taskset")
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	argv := append([]string{"taskset", "-c", cpu, exe}, os.Args[1:]...)
	return syscall.Exec(ts, argv, append(os.Environ(), envGeneratorCPU+"="+cpu))
}

// child is a measured server process the harness started. Its pid is the
// server's own (taskset execs it), so /proc/<pid> describes the server.
type child struct {
	name string
	cmd  *exec.Cmd
	pid  int
	url  string // base URL (upstream, hop) or MCP endpoint URL (gateway)

	exited     chan struct{}
	mu         sync.Mutex
	tail       []string // last stderr lines, for error messages
	goroutines atomic.Int64
	quitting   atomic.Bool
}

var (
	childrenMu sync.Mutex
	children   []*child
)

// killChildren kills every child still running; cleanup on any exit path.
func killChildren() {
	childrenMu.Lock()
	defer childrenMu.Unlock()
	for _, c := range children {
		c.kill()
	}
}

// goroutineHeader matches a goroutine's first line in a SIGQUIT dump.
var goroutineHeader = regexp.MustCompile(`^goroutine \d+ .*\[`)

// startChild starts bin with args, on cpu when cpu is not "", and waits
// until it reports its URL: a "listening URL" line on stdout (upstream,
// hop) or a JSON log line with a "url" attribute on stderr (gateway).
func startChild(ctx context.Context, name, cpu string, env []string, bin string, args ...string) (*child, error) {
	argv := append([]string{bin}, args...)
	if cpu != "" {
		argv = append([]string{"taskset", "-c", cpu}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	// Killed with the harness even if it dies without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, pid: cmd.Process.Pid, exited: make(chan struct{})}
	childrenMu.Lock()
	children = append(children, c)
	childrenMu.Unlock()

	urls := make(chan string, 2)
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		c.read(stdout, urls)
	}()
	go func() {
		defer readers.Done()
		c.read(stderr, urls)
	}()
	go func() {
		readers.Wait()
		_ = cmd.Wait()
		close(c.exited)
	}()
	timer := time.NewTimer(2 * time.Minute)
	defer timer.Stop()
	select {
	case c.url = <-urls:
		return c, nil
	case <-c.exited:
		return nil, fmt.Errorf("%s exited before serving: %s\n%s", name, cmd.ProcessState, c.lastLines())
	case <-timer.C:
		c.kill()
		return nil, fmt.Errorf("%s: %w within 2m\n%s", name, errNotReady, c.lastLines())
	case <-ctx.Done():
		c.kill()
		return nil, ctx.Err()
	}
}

// read drains one pipe (a child must never block on a full pipe), finds
// the URL, keeps the last lines and counts goroutines in a SIGQUIT dump.
func (c *child) read(r io.Reader, urls chan<- string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	found := false
	for sc.Scan() {
		line := sc.Bytes()
		if !found {
			if u, ok := listeningURL(line); ok {
				found = true
				urls <- u
			}
		}
		if c.quitting.Load() && goroutineHeader.Match(line) {
			c.goroutines.Add(1)
			continue
		}
		c.mu.Lock()
		c.tail = append(c.tail, string(line))
		if len(c.tail) > 40 {
			c.tail = c.tail[len(c.tail)-20:]
		}
		c.mu.Unlock()
	}
	_, _ = io.Copy(io.Discard, r)
}

func listeningURL(line []byte) (string, bool) {
	if u, ok := bytes.CutPrefix(line, []byte("listening ")); ok {
		return string(u), true
	}
	if len(line) == 0 || line[0] != '{' {
		return "", false
	}
	var rec struct {
		Msg string `json:"msg"`
		URL string `json:"url"`
	}
	if json.Unmarshal(line, &rec) == nil && rec.Msg == "serving" && strings.HasPrefix(rec.URL, "http://") {
		return rec.URL, true
	}
	return "", false
}

func (c *child) lastLines() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.tail, "\n")
}

// kill ends the child: SIGTERM, then SIGKILL after two seconds.
func (c *child) kill() {
	select {
	case <-c.exited:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(2 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}

// quitDump sends SIGQUIT, which makes a Go program print every goroutine
// (GOTRACEBACK=all in its environment) and exit, and returns how many
// goroutines the dump listed. The gateway has no pprof endpoint; this is
// how the harness counts its goroutines, once, at the end of its life.
func (c *child) quitDump() (int, error) {
	c.quitting.Store(true)
	if err := c.cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		return 0, err
	}
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		c.kill()
		return 0, fmt.Errorf("%s did not exit on SIGQUIT", c.name)
	}
	return int(c.goroutines.Load()), nil
}

// cpu is the time the process has run on a CPU: its threads' schedstat
// run times, or utime+stime from /proc/<pid>/stat in clock ticks when
// schedstat is missing.
func cpu(pid int) (time.Duration, error) {
	if run, _, ok, err := schedstat(pid); ok || err != nil {
		return time.Duration(run), err
	}
	ut, st, err := statTicks(pid)
	return time.Duration(ut+st) * time.Second / time.Duration(clockTicks), err
}

// statTicks is the process's user and system time from /proc/<pid>/stat,
// in clock ticks.
func statTicks(pid int) (user, sys int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// Fields after the parenthesised command name; utime and stime are
	// fields 14 and 15 of the whole line.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: short line", pid)
	}
	user, _ = strconv.ParseInt(f[11], 10, 64)
	sys, _ = strconv.ParseInt(f[12], 10, 64)
	return user, sys, nil
}

// clockTicks is USER_HZ, 100 on every Linux the harness has met.
var clockTicks = 100

// selfCPU is the harness's own user+system time (the load generator).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// status holds what /proc/<pid>/status says about memory and threads.
type status struct {
	RSS, HWM int64 // KiB
	Threads  int
}

func procStatus(pid int) (status, error) {
	var s status
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			s.RSS = n
		case "VmHWM":
			s.HWM = n
		case "Threads":
			s.Threads = int(n)
		}
	}
	return s, nil
}

// resetPeak resets VmHWM to the current RSS (clear_refs "5"), so a peak
// read later belongs to one measurement window.
func resetPeak(pid int) bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
}

// snapshot is a process's resources at one moment. Its TCP sockets are
// told apart by port: connections accepted on its own listener (In), to
// the upstream (Up: the idle pool, not a leak), and CLOSE_WAIT ones (the
// peer closed and the process did not: a leak).
type snapshot struct {
	status
	FDs, In, Up, CloseWait int
	Other                  []string // sockets none of the above
}

// snap reads pid's resources; listen is its listening port, upstream the
// upstream's (0: not classified).
func snap(pid, listen, upstream int) snapshot {
	s, _ := procStatus(pid)
	sn := snapshot{status: s}
	socks := tcpSockets(pid)
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, e := range ents {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
		if err != nil {
			continue // closed since the listing
		}
		sn.FDs++
		if !strings.HasPrefix(l, "socket:[") {
			continue
		}
		sk, ok := socks[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")]
		switch {
		case !ok:
			sn.Other = append(sn.Other, l+" (not in /proc/net/tcp)")
		case sk.state == "08":
			sn.CloseWait++
		case sk.state == "0A": // the listener itself
		case sk.local == listen:
			sn.In++
		case upstream != 0 && sk.remote == upstream:
			sn.Up++
		default:
			sn.Other = append(sn.Other, fmt.Sprintf("%s local port %d remote port %d state %s", l, sk.local, sk.remote, sk.state))
		}
	}
	return sn
}

func (s snapshot) String() string {
	return fmt.Sprintf("RSS %s, fds %d (inbound conns %d, upstream conns %d, CLOSE_WAIT %d), threads %d", mib(s.RSS), s.FDs, s.In, s.Up, s.CloseWait, s.Threads)
}

type tcpSocket struct {
	local, remote int
	state         string
}

// tcpSockets maps socket inodes to ports and state, from the process's
// network namespace's /proc/<pid>/net/tcp and tcp6.
func tcpSockets(pid int) map[string]tcpSocket {
	m := map[string]tcpSocket{}
	for _, f := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		if err != nil {
			continue
		}
		for i, line := range strings.Split(string(b), "\n") {
			fs := strings.Fields(line)
			if i == 0 || len(fs) < 10 {
				continue
			}
			m[fs[9]] = tcpSocket{local: hexPort(fs[1]), remote: hexPort(fs[2]), state: fs[3]}
		}
	}
	return m
}

func hexPort(addr string) int {
	_, p, _ := strings.Cut(addr, ":")
	n, _ := strconv.ParseInt(p, 16, 32)
	return int(n)
}

// port is the port of a URL like http://127.0.0.1:1234/mcp, or 0.
func port(rawURL string) int {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(u.Port())
	return n
}

func mib(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }

// schedstat sums the process's threads' /proc/<pid>/task/<tid>/schedstat:
// the time run on a CPU (nanoseconds; Go threads do not exit, so none is
// lost) and the turns on a CPU. ok is false when there is no schedstat.
func schedstat(pid int) (run, turns int64, ok bool, err error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, 0, false, nil
	}
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // thread gone
		}
		f := strings.Fields(string(b))
		if len(f) < 3 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, 0, true, fmt.Errorf("%s: %w", t, err)
		}
		k, _ := strconv.ParseInt(f[2], 10, 64)
		run, turns = run+n, turns+k
	}
	return run, turns, true, nil
}

// counts is how many read and write system calls a process has made
// (/proc/<pid>/io), how many times its threads were put on a CPU
// (schedstat's turns: wake-ups, roughly), and its user and system time
// in clock ticks.
func counts(pid int) (c procCounts) {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid)); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ": "); ok && (k == "syscr" || k == "syscw") {
				n, _ := strconv.ParseInt(v, 10, 64)
				c.syscalls += n
			}
		}
	}
	_, c.wakeups, _, _ = schedstat(pid)
	c.user, c.sys, _ = statTicks(pid)
	return c
}

// procCounts is what counts reads; sub gives a window's share.
type procCounts struct{ syscalls, wakeups, user, sys int64 }

func (c procCounts) sub(o procCounts) procCounts {
	return c.add(procCounts{-o.syscalls, -o.wakeups, -o.user, -o.sys})
}

func (c procCounts) add(o procCounts) procCounts {
	return procCounts{c.syscalls + o.syscalls, c.wakeups + o.wakeups, c.user + o.user, c.sys + o.sys}
}
