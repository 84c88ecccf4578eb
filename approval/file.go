package approval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"
)

// FileStore keeps approvals in one JSON file (beside the audit log, by
// default). Each change reads the file, changes it and replaces it with a
// rename, under an in-process mutex and an exclusive flock on a lock file
// beside it, so processes sharing the file never lose or repeat a change,
// and a crash leaves the old file or the new one, never half of one. A
// FileStore with an empty path keeps everything in memory.
//
// Decided requests are dropped from the file a day after they end,
// requests that expired undecided [KeepUndecided] after, so it does not
// grow without bound: what one requester can add undecided is capped
// (see [Limits]); the rest needs an approver.
type FileStore struct {
	path string

	mu  sync.Mutex
	mem *fileData // the in-memory store when path is ""
}

type fileData struct {
	// Epoch is made with the file; a file that is lost is made anew with
	// a new epoch, so confirmations issued against the lost one (whose
	// spent nonces went with it) are refused, not run again.
	Epoch    string              `json:"epoch"`
	Requests map[string]*Request `json:"requests"`
	Nonces   map[string]int64    `json:"nonces"` // nonce → unix expiry
}

// keepFinished is how long a finished request stays in the file.
const keepFinished = 24 * time.Hour

// OpenFileStore opens (creating when absent) the store at path; "" keeps
// it in memory.
func OpenFileStore(path string) (*FileStore, error) {
	s := &FileStore{path: path}
	if path == "" {
		s.mem = &fileData{Epoch: newEpoch()}
		return s, nil
	}
	// Read once to report a corrupt or unreadable file at start, and
	// make it (with its epoch) when it is absent.
	if _, err := s.Epoch(context.Background()); err != nil {
		return nil, err
	}
	return s, nil
}

// Epoch returns the file's epoch, making the file when it is absent.
func (s *FileStore) Epoch(context.Context) (string, error) {
	var out string
	err := s.update(func(d *fileData) (bool, error) {
		out = d.Epoch
		return false, nil
	})
	return out, err
}

// Path returns the file, or "" in memory.
func (s *FileStore) Path() string { return s.path }

func (s *FileStore) Close() error { return nil }

// update runs f on the current data under the locks, and writes the data
// back when f reports a change.
func (s *FileStore) update(f func(*fileData) (bool, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.path == "" {
		_, err := f(s.mem)
		return err
	}
	lock, err := os.OpenFile(s.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("approval store: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("approval store: lock: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	d := &fileData{}
	b, err := os.ReadFile(s.path)
	switch {
	case os.IsNotExist(err):
	case err != nil:
		return fmt.Errorf("approval store: %w", err)
	case len(b) > 0:
		if err := json.Unmarshal(b, d); err != nil {
			return fmt.Errorf("approval store %s is not valid JSON: %v", s.path, err)
		}
	}
	fresh := d.Epoch == ""
	if fresh {
		// No file (or one from before epochs): a new generation, written
		// with this change or on its own.
		d.Epoch = newEpoch()
	}
	changed, err := f(d)
	if err != nil || !(changed || fresh) {
		return err
	}
	out, err := json.Marshal(d)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), filepath.Base(s.path)+".tmp*")
	if err != nil {
		return fmt.Errorf("approval store: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return fmt.Errorf("approval store: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("approval store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("approval store: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return fmt.Errorf("approval store: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("approval store: %w", err)
	}
	return nil
}

func (d *fileData) prune(now time.Time) {
	for id, r := range d.Requests {
		end, keep := r.Expires, keepFinished
		switch r.Status {
		case StatusPending:
			keep = KeepUndecided
		case StatusExecuted, StatusRejected:
			end = maxTime(r.Decided, r.Executed)
		}
		if now.Sub(end) > keep {
			delete(d.Requests, id)
		}
	}
	for n, exp := range d.Nonces {
		if now.Unix() > exp {
			delete(d.Nonces, n)
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func clone(r *Request) *Request {
	c := *r
	c.Arguments = slices.Clone(r.Arguments)
	return &c
}

func (s *FileStore) Create(_ context.Context, r *Request, lim Limits) error {
	return s.update(func(d *fileData) (bool, error) {
		if d.Requests == nil {
			d.Requests = map[string]*Request{}
		}
		if _, dup := d.Requests[r.ID]; dup {
			return false, fmt.Errorf("approval %s already exists", r.ID)
		}
		d.prune(r.Created)
		// A request that a later one of its call replaced (it expired
		// undecided and the call was asked again) counts no more, as in
		// the Redis store, which takes it out of the sets it counts.
		newest := map[CallKey]time.Time{}
		for _, p := range d.Requests {
			if k := p.Key(); p.Workspace == r.Workspace && p.Created.After(newest[k]) {
				newest[k] = p.Created
			}
		}
		var held []*Request
		for _, p := range d.Requests {
			if p.Workspace == r.Workspace && p.Status == StatusPending && !p.Created.Before(newest[p.Key()]) {
				held = append(held, p)
			}
		}
		if err := admit(r, held, lim); err != nil {
			if pe, ok := err.(*PendingError); ok {
				pe.Request = clone(pe.Request)
			}
			return false, err
		}
		d.Requests[r.ID] = clone(r)
		return true, nil
	})
}

func (s *FileStore) Get(_ context.Context, id string) (*Request, error) {
	var out *Request
	err := s.update(func(d *fileData) (bool, error) {
		r := d.Requests[id]
		if r == nil {
			return false, ErrNotFound
		}
		out = clone(r)
		return false, nil
	})
	return out, err
}

func (s *FileStore) List(_ context.Context, workspace string, now time.Time) ([]*Request, error) {
	var out []*Request
	err := s.update(func(d *fileData) (bool, error) {
		for _, r := range d.Requests {
			if r.Workspace == workspace && r.StatusAt(now) == StatusPending {
				out = append(out, clone(r))
			}
		}
		return false, nil
	})
	slices.SortFunc(out, func(a, b *Request) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return compareStrings(a.ID, b.ID)
	})
	return out, err
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (s *FileStore) Decide(_ context.Context, id, approver string, approve bool, now time.Time) (*Request, error) {
	return s.transition(id, StatusPending, now, func(r *Request) {
		r.Status = StatusRejected
		if approve {
			r.Status = StatusApproved
		}
		r.Approver, r.Decided = approver, now
	})
}

func (s *FileStore) Claim(_ context.Context, id string, now time.Time) (*Request, error) {
	return s.transition(id, StatusApproved, now, func(r *Request) {
		r.Status, r.Executed = StatusExecuted, now
	})
}

// transition applies change to request id, under the file's lock, when its
// status at now is from; otherwise it returns the request as it stands
// with a conflict, and changes nothing.
func (s *FileStore) transition(id string, from Status, now time.Time, change func(*Request)) (*Request, error) {
	var out *Request
	err := s.update(func(d *fileData) (bool, error) {
		r := d.Requests[id]
		if r == nil {
			return false, ErrNotFound
		}
		if r.StatusAt(now) != from {
			out = clone(r)
			out.Status = r.StatusAt(now)
			return false, conflict(out)
		}
		change(r)
		out = clone(r)
		return true, nil
	})
	return out, err
}

func (s *FileStore) Spend(_ context.Context, nonce, epoch string, expires time.Time) (bool, error) {
	fresh := false
	err := s.update(func(d *fileData) (bool, error) {
		if epoch != d.Epoch {
			return false, ErrEpoch
		}
		if d.Nonces == nil {
			d.Nonces = map[string]int64{}
		}
		d.prune(time.Now())
		if _, spent := d.Nonces[nonce]; spent {
			return false, nil
		}
		d.Nonces[nonce] = expires.Unix()
		fresh = true
		return true, nil
	})
	return fresh, err
}

func (s *FileStore) Latest(_ context.Context, k CallKey) (*Request, error) {
	var out *Request
	err := s.update(func(d *fileData) (bool, error) {
		for _, r := range d.Requests {
			if matches(r, k) && (out == nil || newer(r, out)) {
				out = r
			}
		}
		if out == nil {
			return false, ErrNotFound
		}
		out = clone(out)
		return false, nil
	})
	return out, err
}
