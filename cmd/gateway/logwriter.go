package main

import (
	"bufio"
	"io"
	"log/slog"
	"sync"
	"time"
)

// logWriter buffers log lines so that a busy gateway does not pay one
// write system call per access-log line. Lines reach the underlying
// writer when the buffer fills and at least every flushEvery; Close
// flushes what is left. A crash can lose at most flushEvery of logs —
// audit records do not go through here when audit.path is set.
type logWriter struct {
	once sync.Once
	mu   sync.Mutex
	w    *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

const flushEvery = 200 * time.Millisecond

func newLogWriter(w io.Writer) *logWriter {
	lw := &logWriter{w: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go lw.loop()
	return lw
}

// Write buffers p, one log record. A record never straddles a flush, so
// lines stay whole when another writer shares the stream.
func (lw *logWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if len(p) > lw.w.Available() {
		lw.w.Flush()
	}
	return lw.w.Write(p)
}

// writeThrough writes p at once, after what is buffered: for records that
// must be out before the reply, such as audit records on the log stream.
func (lw *logWriter) writeThrough(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if err := lw.w.Flush(); err != nil {
		return 0, err
	}
	n, err := lw.w.Write(p)
	if err == nil {
		err = lw.w.Flush()
	}
	return n, err
}

// throughWriter is a logWriter that writes every record at once.
type throughWriter struct{ lw *logWriter }

func (t throughWriter) Write(p []byte) (int, error) { return t.lw.writeThrough(p) }

func (lw *logWriter) flush() {
	lw.mu.Lock()
	lw.w.Flush()
	lw.mu.Unlock()
}

func (lw *logWriter) loop() {
	defer close(lw.done)
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			lw.flush()
		case <-lw.stop:
			lw.flush()
			return
		}
	}
}

// Close stops the flusher and writes out what is buffered.
func (lw *logWriter) Close() error {
	lw.once.Do(func() { close(lw.stop) })
	<-lw.done
	return nil
}

// newLogs returns the process's logger over a buffered stderr, the audit
// logger that writes each record out at once on the same stream, and the
// function that flushes both at exit.
func newLogs(stderr io.Writer, env lookupEnv) (logger, auditLog *slog.Logger, closeLogs func() error) {
	lw := newLogWriter(stderr)
	return newLogger(lw, env), newLogger(throughWriter{lw}, env), lw.Close
}
