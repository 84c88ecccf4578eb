package proxy

import (
	"context"
	"sync"
)

// shares caps each workspace's concurrent calls to one upstream
// (max_concurrent_per_workspace), so one tenant's slow calls cannot hold
// every max_concurrent slot. A workspace has an entry only while
// it has calls holding or waiting for a slot: memory grows with the calls
// in flight, never with the number of workspaces seen. Safe for
// concurrent use.
type shares struct {
	max int

	mu sync.Mutex
	m  map[string]*share
}

// share is one workspace's slots.
type share struct {
	slots chan struct{}
	users int // calls holding or waiting for a slot; guarded by shares.mu
}

func newShares(max int) *shares {
	return &shares{max: max, m: make(map[string]*share)}
}

// acquire waits until ws has a free slot or ctx ends. When it returns a
// share, the caller must pass it to release once its call is over; nil
// means ctx ended first.
func (s *shares) acquire(ctx context.Context, ws string) *share {
	s.mu.Lock()
	sh := s.m[ws]
	if sh == nil {
		sh = &share{slots: make(chan struct{}, s.max)}
		s.m[ws] = sh
	}
	sh.users++
	s.mu.Unlock()
	select {
	case sh.slots <- struct{}{}:
		return sh
	case <-ctx.Done():
		s.leave(ws, sh)
		return nil
	}
}

// release frees the slot acquire returned.
func (s *shares) release(ws string, sh *share) {
	<-sh.slots
	s.leave(ws, sh)
}

func (s *shares) leave(ws string, sh *share) {
	s.mu.Lock()
	if sh.users--; sh.users == 0 {
		delete(s.m, ws)
	}
	s.mu.Unlock()
}

// len is the number of workspaces with calls in flight or waiting.
func (s *shares) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}
