package main

import (
	"os"
	"os/exec"
	goruntime "runtime"
	runtimemetrics "runtime/metrics"
	"strings"
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
	s := []runtimemetrics.Sample{{Name: "/gc/gogc:percent"}}
	runtimemetrics.Read(s)
	if s[0].Value.Kind() != runtimemetrics.KindUint64 {
		t.Fatal("/gc/gogc:percent is not a runtime metric here")
	}
	return int(s[0].Value.Uint64())
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
	if live := liveHeap(); live > 8<<20 {
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
	if want := gcPercent(liveHeap()); first != want || first == 100 {
		t.Fatalf("pacing began at percent %d, want %d (not the default) for %d bytes live", first, want, liveHeap())
	}
	goruntime.KeepAlive(held)
	held = nil
	deadline := time.Now().Add(10 * time.Second)
	for {
		goruntime.GC()
		time.Sleep(20 * time.Millisecond) // cleanups run after the cycle, on their own goroutine
		want := gcPercent(liveHeap())
		if got := currentGOGC(t); got == want && got > first {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("after collections for 10 s the percent is %d, want %d (above %d) for %d bytes live", got, want, first, liveHeap())
		}
	}
	stop1()
	stop1() // a second stop of the same serve changes nothing
	if got, want := currentGOGC(t), gcPercent(liveHeap()); got != want {
		t.Errorf("with one serve still running, the percent is %d, want %d", got, want)
	}
	stop2()
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
