package openapi

import (
	"runtime"
	"strings"
	"testing"
)

// pathName keeps the end of a long path within maxName, and reading a
// path of many segments costs memory in proportion to it: the name's
// length is kept as leading segments go, not found by joining what is
// left again for each (for 20,000 segments that allocated about 600 MB).
func TestPathNameOfManySegments(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"/pets/{pet_id}", "get_pets_by_pet_id"},
		{"/repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}/commits", "get_repositories_pullrequests_commits"},
		{strings.Repeat("/ab", 100) + "/end", "get_" + strings.Repeat("ab_", 17) + "end"},
		{strings.Repeat("/{x}", 40), "get_by_x"},
	} {
		if got := pathName("GET", c.path); got != c.want || len(got) > maxName {
			t.Errorf("pathName(GET, %.40q...) = %q, want %q", c.path, got, c.want)
		}
	}
	path := strings.Repeat("/ab", 20000) + "/end"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	name := pathName("GET", path)
	runtime.ReadMemStats(&after)
	if want := "get_" + strings.Repeat("ab_", 17) + "end"; name != want {
		t.Errorf("pathName of %d segments = %q, want %q", 20001, name, want)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	if !raceEnabled && alloc > 1000*uint64(len(path)) {
		t.Errorf("pathName of a %d-byte path allocated %d bytes", len(path), alloc)
	}
}

// raceEnabled is set under the race detector (race_internal_test.go).
var raceEnabled bool
