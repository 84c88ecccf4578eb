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
//
// A failed write never stops the stream: bufio.Writer refuses every write
// after its first error, so the buffer is reset instead (what it held is
// lost) and the next line is tried afresh.
type logWriter struct {
	once sync.Once
	mu   sync.Mutex
	out  io.Writer
	w    *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

const flushEvery = 200 * time.Millisecond

func newLogWriter(w io.Writer) *logWriter {
	lw := &logWriter{out: w, w: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go lw.loop()
	return lw
}

// Write buffers p, one log record. A record never straddles a flush, so
// lines stay whole when another writer shares the stream.
func (lw *logWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if len(p) > lw.w.Available() {
		lw.flushLocked()
	}
	n, err := lw.w.Write(p)
	if err != nil {
		lw.w.Reset(lw.out)
	}
	return n, err
}

// flushLocked writes out the buffer; on failure it drops it, so the
// writer keeps working for the lines that follow.
func (lw *logWriter) flushLocked() error {
	err := lw.w.Flush()
	if err != nil {
		lw.w.Reset(lw.out)
	}
	return err
}

// writeThrough writes p at once, after what is buffered: for records that
// must be out before the reply, such as audit records on the log stream.
func (lw *logWriter) writeThrough(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	// Buffered lines that cannot be written are dropped; the record is
	// still tried, in one write of its own.
	lw.flushLocked()
	return lw.out.Write(p)
}

// throughWriter is a logWriter that writes every record at once.
type throughWriter struct{ lw *logWriter }

func (t throughWriter) Write(p []byte) (int, error) { return t.lw.writeThrough(p) }

func (lw *logWriter) flush() {
	lw.mu.Lock()
	lw.flushLocked()
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
