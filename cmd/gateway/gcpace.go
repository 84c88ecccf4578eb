package main

import (
	"math"
	goruntime "runtime"
	"runtime/debug"
	runtimemetrics "runtime/metrics"
	"sync"
)

// gcFloor is the least heap growth the collector waits for between two
// cycles when little is live.
//
// A serving gateway holds a few MiB (its catalog, its caches) and makes
// about 17 KiB of garbage per call. At Go's default pacing (GOGC=100:
// collect when the heap has grown by what the last cycle had to scan) that
// is a cycle every few hundred calls. Letting the heap grow by at least
// gcFloor before collecting cut CPU per call by 4–10 % at every
// concurrency on the benchmark's small read, for about 23 MiB more peak
// RSS (docs/performance.md). When a cycle scans gcFloor or more (a large
// catalog) the default pacing applies unchanged.
const gcFloor = 32 << 20

// gcMaxPercent caps the percent the pacer sets, so that a nearly empty
// heap does not ask for an absurd one: below 3.2 MiB to scan, the heap
// grows by ten times what was scanned rather than by gcFloor.
const gcMaxPercent = 1000

// paceGC sets the collector's percent (as GOGC would) after every cycle
// from what that cycle scanned (the live heap, goroutine stacks and
// globals), so that the next cycle starts at live + max(scanned,
// gcFloor). It does nothing when GOGC is set: the operator's choice
// stands. GOMEMLIMIT, and the soft limit a reload sets, still bound the
// heap: the collector runs earlier when either is near. The pacing is
// the process's: the last stop of overlapping calls (tests serve several
// gateways in one process) ends it and puts back the percent there was.
func paceGC(getenv func(string) string) (stop func()) {
	if getenv("GOGC") != "" {
		return func() {}
	}
	pacer.mu.Lock()
	defer pacer.mu.Unlock()
	if pacer.users == 0 {
		pacer.prev = debug.SetGCPercent(100)
		pacer.last = 100
		pacer.gen++
		pacer.setLocked(gcPercent(scanned()))
		pacer.arm()
	}
	pacer.users++
	var once sync.Once
	return func() { once.Do(pacer.release) }
}

var pacer gcPacer

type gcPacer struct {
	mu    sync.Mutex
	users int    // paceGC calls not yet stopped
	gen   uint64 // pacing sessions begun: a sentinel of an ended one does nothing
	prev  int    // the percent before pacing began
	last  int    // the percent set last
	armed uint64 // sentinels armed after a cycle, for tests
}

// gcSentinel is an object nothing refers to; its cleanup runs after the
// cycle that finds it unreachable. It is larger than the allocator's
// tiny blocks, which may share memory with other objects and so be freed
// late.
type gcSentinel struct{ _ [4]uint64 }

func (p *gcPacer) arm() {
	goruntime.AddCleanup(new(gcSentinel), p.cycle, p.gen)
}

// cycle runs once after each collection: it paces the next and re-arms.
func (p *gcPacer) cycle(gen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.users == 0 || gen != p.gen {
		return
	}
	p.setLocked(gcPercent(scanned()))
	p.arm()
	p.armed++
}

func (p *gcPacer) setLocked(pct int) {
	if pct != p.last {
		debug.SetGCPercent(pct)
		p.last = pct
	}
}

func (p *gcPacer) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.users--; p.users == 0 {
		debug.SetGCPercent(p.prev)
	}
}

// gcPercent is the percent that puts the next cycle at live +
// max(scan, gcFloor), where scan is what the last cycle scanned: Go sets
// the goal at live + scan × percent / 100. It moves in steps of 25, so
// that small changes in what is live do not reset it every cycle.
func gcPercent(scan uint64) int {
	if scan == 0 || scan >= gcFloor {
		return 100
	}
	pct := int(math.Ceil(100*float64(gcFloor)/float64(scan)/25)) * 25
	return min(pct, gcMaxPercent)
}

// scanned is what the last cycle had to scan, in bytes: the heap it found
// live, goroutine stacks and globals (0 before the first cycle).
func scanned() uint64 {
	s := []runtimemetrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"},
	}
	runtimemetrics.Read(s)
	var n uint64
	for _, x := range s {
		if x.Value.Kind() == runtimemetrics.KindUint64 {
			n += x.Value.Uint64()
		}
	}
	if s[0].Value.Kind() != runtimemetrics.KindUint64 || s[0].Value.Uint64() == 0 {
		return 0
	}
	return n
}
