package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// Catalogs may include fragment files. The watcher treats the
// catalog and the fragments the serving catalog read as one source: it
// watches each fragment's directory too, and reloads when the bytes of
// any of them change. A glob that starts matching a new file in a
// directory nobody watches is seen on the next change of a watched file
// or on SIGHUP.

// includedFiles lists the fragments the serving catalog was built from.
func (rt *runtime) includedFiles() []string {
	if s := rt.cur.Load(); s != nil {
		return s.core.Catalog().Files
	}
	return nil
}

// watchIncluded adds each fragment's directory to w (adding a directory
// twice is harmless).
func watchIncluded(w *fsnotify.Watcher, files []string) {
	for _, f := range files {
		_ = w.Add(filepath.Dir(f))
	}
}

// sourcesHash hashes the catalog and its fragments together; "" when the
// catalog cannot be read.
func sourcesHash(path string, files []string) string {
	main := fileHash(path)
	if main == "" || len(files) == 0 {
		return main
	}
	h := sha256.New()
	h.Write([]byte(main))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		h.Write([]byte{0})
		h.Write([]byte(f))
		h.Write([]byte{0})
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))
}
