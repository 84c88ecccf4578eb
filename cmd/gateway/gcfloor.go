package main

import (
	"os"
	"sync"
)

// A serving gateway holds a small heap (the catalog, its caches, a few
// buffers per call in flight) and allocates quickly, so at Go's default
// pace (GOGC=100: collect when the heap has doubled) the collector runs
// several times a second, and its cost per cycle, which does not shrink
// with the heap, becomes a large share of a small call: at 16 clients on
// a small read, a 32 MiB floor cut the gateway's CPU per call by about a
// fifth (test/bench, docs/performance.md).
//
// gcFloor is that floor: a pointer-free allocation the gateway never
// touches. The kernel never backs its pages, so it adds nothing to the
// resident set, and the collector has nothing in it to mark; but it
// counts as live heap, so the next collection starts at twice (live +
// floor) rather than twice live. What it costs is up to gcFloorBytes more
// garbage resident between collections, whatever the catalog's size.
//
// An operator who sets GOGC has chosen the collector's pace; the floor
// stays out of the way then (GOGC=100 restores Go's default exactly).
// Under GOMEMLIMIT the floor counts towards the limit like any heap.
const gcFloorBytes = 32 << 20

var (
	gcFloor     []byte
	gcFloorOnce sync.Once
)

// raiseGCFloor sets the floor once per process, for the commands that
// serve (serve, demo; batch commands run under a memory limit instead).
// main calls it first thing: memory fresh from the kernel needs no
// zeroing, while a block carved from heap that loading a large catalog
// has used and freed would be zeroed, and so made resident.
func raiseGCFloor() {
	gcFloorOnce.Do(func() {
		if os.Getenv("GOGC") == "" { // as the runtime reads it
			gcFloor = make([]byte, gcFloorBytes)
		}
	})
}
