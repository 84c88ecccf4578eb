package main

import (
	"os"
	"os/exec"
	goruntime "runtime"
	runtimemetrics "runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"
)

// The heap goal a paced cycle aims at is live + max(live, gcFloor): a
// small heap may grow by the floor before the next collection, a large
// one by itself, as with GOGC=100.
func TestGCPercentKeepsAFloorOfGrowth(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100},         // before the first cycle: the default
		{1 * mib, 1000},  // capped
		{5 * mib, 650},   // 32/5 = 6.4, up to a step of 25
		{8 * mib, 400},   // 8 + 32 = 8 × 5
		{16 * mib, 200},  // 16 + 32
		{31 * mib, 125},  // just under the floor
		{32 * mib, 100},  // at the floor: the default
		{500 * mib, 100}, // a large catalog: the default
	} {
		if got := gcPercent(c.live); got != c.want {
			t.Errorf("gcPercent(%d MiB) = %d, want %d", c.live/mib, got, c.want)
		}
	}
}

func currentGOGC(t *testing.T) int {
	t.Helper()
	return int(gcMetric(t, "/gc/gogc:percent"))
}

// Pacing follows each collection, the last of overlapping serves to stop
// puts back the percent there was, and an operator's GOGC is left alone.
// It runs in a process of its own: the pacing is the process's, and other
// tests' gateways and heaps would move it.
func TestPaceGCFollowsTheLiveHeapAndStops(t *testing.T) {
	const child = "GATEWAY_TEST_PACE_CHILD"
	if os.Getenv(child) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPaceGCFollowsTheLiveHeapAndStops$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), child+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestPaceGCFollowsTheLiveHeapAndStops") {
			t.Fatalf("the pacing test in its own process: %v\n%s", err, out)
		}
		return
	}
	before := currentGOGC(t)
	if stop := paceGC(func(k string) string {
		if k == "GOGC" {
			return "300"
		}
		return ""
	}); currentGOGC(t) != before {
		t.Errorf("with GOGC set, the percent moved from %d to %d", before, currentGOGC(t))
	} else {
		stop()
	}

	// Pacing begins with 24 MiB more live than the process holds, then
	// they are let go: the collections after re-pace for the smaller heap.
	goruntime.GC()
	if live := gcMetric(t, "/gc/heap/live:bytes"); live > 8<<20 {
		t.Fatalf("the test process holds %d bytes live, too many to see the pacing move", live)
	}
	held := make([]byte, 24<<20)
	for i := range held {
		held[i] = byte(i)
	}
	goruntime.GC()
	noEnv := func(string) string { return "" }
	stop1 := paceGC(noEnv)
	stop2 := paceGC(noEnv)
	first := currentGOGC(t)
	if want := gcPercent(scanned()); first != want || first == 100 {
		t.Fatalf("pacing began at percent %d, want %d (not the default) for %d bytes scanned", first, want, scanned())
	}
	goruntime.KeepAlive(held)
	held = nil
	repaced := func(above int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			goruntime.GC()
			time.Sleep(20 * time.Millisecond) // cleanups run after the cycle, on their own goroutine
			want := gcPercent(scanned())
			if got := currentGOGC(t); got == want && got != above {
				return
			} else if time.Now().After(deadline) {
				t.Fatalf("after collections for 10 s the percent is %d, want %d (not %d) for %d bytes scanned", got, want, above, scanned())
			}
		}
	}
	repaced(first)

	// Goroutine stacks are scanned too, and Go's goal counts them: with
	// a hundred deep stacks the goal stays near live + gcFloor, not ten
	// times the stacks.
	release := make(chan struct{})
	var ready sync.WaitGroup
	for range 100 {
		ready.Add(1)
		go deepStack(64, &ready, release)
	}
	ready.Wait()
	paced := currentGOGC(t)
	repaced(paced)
	live, goal, scan := gcMetric(t, "/gc/heap/live:bytes"), gcMetric(t, "/gc/heap/goal:bytes"), scanned()
	if most := live + max(scan, gcFloor) + scan/4 + 1<<20; goal > most {
		t.Errorf("with %d bytes live and %d scanned, the heap goal is %d, want at most %d", live, scan, goal, most)
	}
	close(release)

	stop1()
	stop1() // a second stop of the same serve changes nothing
	if got, want := currentGOGC(t), gcPercent(scanned()); got != want {
		t.Errorf("with one serve still running, the percent is %d, want %d", got, want)
	}
	stop2()
	if got := currentGOGC(t); got != before {
		t.Errorf("after the last stop the percent is %d, want %d as before", got, before)
	}
	// Pacing begun again while a sentinel of the ended one is still
	// armed: one chain of sentinels goes on, not two.
	stopped := paceGC(noEnv)
	armed := func() uint64 {
		pacer.mu.Lock()
		defer pacer.mu.Unlock()
		return pacer.armed
	}
	a0 := armed()
	const cycles = 8
	for range cycles {
		goruntime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	if n := armed() - a0; n < 1 || n > cycles+2 {
		t.Errorf("%d collections armed %d sentinels, want 1 to %d (one chain; two would arm about %d)", cycles, n, cycles+2, 2*cycles)
	}
	stopped()
	if got := currentGOGC(t); got != before {
		t.Errorf("after the last stop the percent is %d, want %d as before", got, before)
	}
	// A cleanup armed before the stop finds pacing ended and does nothing.
	goruntime.GC()
	time.Sleep(20 * time.Millisecond)
	if got := currentGOGC(t); got != before {
		t.Errorf("a collection after the stop set the percent to %d, want %d", got, before)
	}
}

// deepStack holds a goroutine with about depth KiB of stack until release.
func deepStack(depth int, ready *sync.WaitGroup, release <-chan struct{}) byte {
	var pad [1024]byte
	pad[depth%len(pad)] = byte(depth)
	if depth > 0 {
		return deepStack(depth-1, ready, release) + pad[depth%len(pad)]
	}
	ready.Done()
	<-release
	return pad[0]
}

func gcMetric(t *testing.T, name string) uint64 {
	t.Helper()
	s := []runtimemetrics.Sample{{Name: name}}
	runtimemetrics.Read(s)
	if s[0].Value.Kind() != runtimemetrics.KindUint64 {
		t.Fatalf("%s is not a runtime metric here", name)
	}
	return s[0].Value.Uint64()
}
