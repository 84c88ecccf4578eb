package oauthserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotFound: the key holds nothing (never stored, taken, or expired).
var ErrNotFound = errors.New("not found")

// Store keeps the authorization server's state (pending sign-ins, codes,
// registrations, refresh tokens, revoked grants) where every replica sees
// it, so any node serves any step. Every method is one atomic step, also
// between processes sharing the store; values expire on their own.
type Store interface {
	// Put stores val under key until exp, replacing what it held.
	Put(ctx context.Context, key string, val []byte, exp time.Time) error
	// Create stores val under key until exp only when key holds nothing,
	// and reports whether it did: a single-use mark.
	Create(ctx context.Context, key string, val []byte, exp time.Time) (bool, error)
	// Get returns what key holds, or ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Take returns what key holds and deletes it in the same step, or
	// ErrNotFound: of two racing callers, one gets the value.
	Take(ctx context.Context, key string) ([]byte, error)
	// Delete forgets key.
	Delete(ctx context.Context, key string) error
	Close() error
}

// FileStore keeps the state in one JSON file, changed under an exclusive
// flock and replaced with a rename (as the approval store does), so
// processes on one host can share it; an empty path keeps it in memory.
type FileStore struct {
	path string
	now  func() time.Time

	mu    sync.Mutex
	mem   map[string]fileEntry
	swept int64 // when mem was last pruned, unix milliseconds
}

type fileEntry struct {
	V []byte `json:"v"`
	E int64  `json:"e"` // unix milliseconds
}

// OpenFileStore opens (creating when absent) the store at path; "" keeps
// it in memory.
func OpenFileStore(path string) (*FileStore, error) {
	s := &FileStore{path: path, now: time.Now, mem: map[string]fileEntry{}}
	if path != "" {
		if err := s.update(func(map[string]fileEntry, int64) bool { return false }); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *FileStore) Close() error { return nil }

// update runs f on the entries under the locks and writes them back when
// f reports a change. Expired entries are dropped when the data is
// written (a read never writes) and, in memory, at most once a minute;
// lookups skip them meanwhile, so a read costs one map lookup in memory.
func (s *FileStore) update(f func(map[string]fileEntry, int64) bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now().UnixMilli()
	if s.path == "" {
		if now-s.swept > 60_000 {
			prune(s.mem, now)
			s.swept = now
		}
		f(s.mem, now)
		return nil
	}
	lock, err := os.OpenFile(s.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("oauth store: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("oauth store: lock: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	d := map[string]fileEntry{}
	b, err := os.ReadFile(s.path)
	switch {
	case os.IsNotExist(err):
	case err != nil:
		return fmt.Errorf("oauth store: %w", err)
	case len(b) > 0:
		if err := json.Unmarshal(b, &d); err != nil {
			return fmt.Errorf("oauth store %s is not valid JSON: %v", s.path, err)
		}
	}
	if !f(d, now) && b != nil {
		return nil
	}
	prune(d, now)
	out, err := json.Marshal(d)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), filepath.Base(s.path)+".tmp*")
	if err != nil {
		return fmt.Errorf("oauth store: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return fmt.Errorf("oauth store: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("oauth store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("oauth store: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return fmt.Errorf("oauth store: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("oauth store: %w", err)
	}
	return nil
}

func prune(d map[string]fileEntry, now int64) {
	for k, e := range d {
		if e.E <= now {
			delete(d, k)
		}
	}
}

// live returns the entry under key unless it is absent or expired.
func live(d map[string]fileEntry, key string, now int64) (fileEntry, bool) {
	e, ok := d[key]
	return e, ok && e.E > now
}

func (s *FileStore) Put(_ context.Context, key string, val []byte, exp time.Time) error {
	return s.update(func(d map[string]fileEntry, _ int64) bool {
		d[key] = fileEntry{V: val, E: exp.UnixMilli()}
		return true
	})
}

func (s *FileStore) Create(_ context.Context, key string, val []byte, exp time.Time) (bool, error) {
	made := false
	err := s.update(func(d map[string]fileEntry, now int64) bool {
		if _, ok := live(d, key, now); ok {
			return false
		}
		d[key] = fileEntry{V: val, E: exp.UnixMilli()}
		made = true
		return true
	})
	return made, err
}

func (s *FileStore) Get(_ context.Context, key string) ([]byte, error) {
	var out []byte
	err := s.update(func(d map[string]fileEntry, now int64) bool {
		if e, ok := live(d, key, now); ok {
			out = e.V
		}
		return false
	})
	if err == nil && out == nil {
		err = ErrNotFound
	}
	return out, err
}

func (s *FileStore) Take(_ context.Context, key string) ([]byte, error) {
	var out []byte
	err := s.update(func(d map[string]fileEntry, now int64) bool {
		e, ok := live(d, key, now)
		if !ok {
			return false
		}
		out = e.V
		delete(d, key)
		return true
	})
	if err == nil && out == nil {
		err = ErrNotFound
	}
	return out, err
}

func (s *FileStore) Delete(_ context.Context, key string) error {
	return s.update(func(d map[string]fileEntry, _ int64) bool {
		_, ok := d[key]
		delete(d, key)
		return ok
	})
}

// RedisStore keeps the state in Redis, shared by replicas: each method is
// one Redis command (SET NX for Create, GETDEL for Take), each key with
// its expiry.
type RedisStore struct {
	rdb    *redis.Client
	prefix string
}

// DefaultRedisPrefix starts every key of a [RedisStore].
const DefaultRedisPrefix = "mcpgw:oauth:"

// OpenRedisStore connects to the Redis server at url
// (redis://[user:password@]host:port/db) and checks that it answers.
func OpenRedisStore(ctx context.Context, url string) (*RedisStore, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("oauth store: %v", err)
	}
	s := &RedisStore{rdb: redis.NewClient(o), prefix: DefaultRedisPrefix}
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		s.rdb.Close()
		return nil, fmt.Errorf("oauth store: redis at %s does not answer: %v", o.Addr, err)
	}
	return s, nil
}

func (s *RedisStore) Close() error { return s.rdb.Close() }

func ttl(exp time.Time) time.Duration {
	return max(time.Until(exp), time.Millisecond)
}

func (s *RedisStore) Put(ctx context.Context, key string, val []byte, exp time.Time) error {
	return s.rdb.Set(ctx, s.prefix+key, val, ttl(exp)).Err()
}

func (s *RedisStore) Create(ctx context.Context, key string, val []byte, exp time.Time) (bool, error) {
	return s.rdb.SetNX(ctx, s.prefix+key, val, ttl(exp)).Result()
}

func (s *RedisStore) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := s.rdb.Get(ctx, s.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	return b, err
}

func (s *RedisStore) Take(ctx context.Context, key string) ([]byte, error) {
	b, err := s.rdb.GetDel(ctx, s.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	return b, err
}

func (s *RedisStore) Delete(ctx context.Context, key string) error {
	return s.rdb.Del(ctx, s.prefix+key).Err()
}
