// Package logger owns harness's session log: one directory holding, per
// run, the normalized event stream (<run>.ndjson), the agent's own stdout
// lines (<run>.native.jsonl), its stderr lines (<run>.stderr.log, created on
// the first stderr line) and a summary (<run>.meta.json). It also lists,
// loads, replays, prunes and exports those logs.
//
// Everything is redacted before it reaches the disk (see Redactor). The
// directory is created 0700 and every file 0600: logs hold prompts, code
// and tool output. The package never prints; it returns values and errors.
package logger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/regfile"
	"github.com/agentharness/harness/internal/xdgdir"
)

// File name suffixes of a run's log files.
const (
	ExtEvents = ".ndjson"
	ExtNative = ".native.jsonl"
	ExtStderr = ".stderr.log"
	ExtMeta   = ".meta.json"
	// ExtTrajectory is the run's trajectory in ATIF (package atif), where
	// bench writes one: pruned and exported with the run's other files.
	ExtTrajectory = ".trajectory.json"
)

// PromptPreviewLen is how many characters of the prompt Meta keeps.
const PromptPreviewLen = 200

// Meta summarizes a run. It is written to <run>.meta.json when the session
// opens and rewritten when it closes.
type Meta struct {
	Run            string       `json:"run"`
	Agent          string       `json:"agent"`
	AgentVersion   string       `json:"agent_version,omitempty"`
	Model          string       `json:"model,omitempty"`
	PromptPreview  string       `json:"prompt_preview,omitempty"` // first 200 characters, redacted
	Cwd            string       `json:"cwd,omitempty"`
	Argv           []string     `json:"argv,omitempty"` // the prompt replaced by "<prompt>"
	Start          time.Time    `json:"start"`
	End            time.Time    `json:"end,omitzero"`
	Status         string       `json:"status,omitempty"` // "running" until Close, then the result status
	ExitCode       *int         `json:"exit_code,omitempty"`
	Signal         string       `json:"signal,omitempty"`
	Usage          *event.Usage `json:"usage,omitempty"`
	CostUSD        *float64     `json:"cost_usd,omitempty"`
	CostEstimated  bool         `json:"cost_estimated,omitempty"`
	SessionID      string       `json:"session_id,omitempty"`
	HarnessVersion string       `json:"harness_version,omitempty"`
	// Protocol is how the agent was driven (harness.Task.Protocol, "acp"),
	// what re-normalizing its native lines needs; empty: its CLI, or a log
	// written before the field.
	Protocol string `json:"protocol,omitempty"`
	// Permissions is the permission mode the agent ran with (harness's
	// "full-access" or "read-only"; "ask" for a live session whose caller
	// answered its permission requests): the requests a protocol's
	// client made and its answers depend on it, which re-normalizing
	// drives again. Empty: a log written before the field (full-access).
	Permissions string `json:"permissions,omitempty"`
	// Resume is the agent's session the run continued (harness.Task's
	// Resume). Over ACP the request that opened it named it and the
	// answer does not, so re-normalizing needs it to name the session
	// (and to drop session/load's replay of the conversation). Empty: a
	// new session, or a log written before the field.
	Resume string `json:"resume,omitempty"`
	// Live says the log is a live session's (harness session, serve's
	// sessions), not a one-prompt run's: a session that was sent no
	// prompt records a stream like a one-prompt ACP run's, and
	// re-normalizing tells them apart by this. False in a log written
	// before the field.
	Live bool `json:"live,omitempty"`
	// NativeDropped and StderrDropped count the bytes, newlines
	// included, of the agent's lines left out of <run>.native.jsonl and
	// <run>.stderr.log once each reached its cap (WithNativeMax): the
	// files then hold the start of what the agent printed, whole lines,
	// and a reparse covers that start only.
	NativeDropped int64 `json:"native_dropped_bytes,omitempty"`
	StderrDropped int64 `json:"stderr_dropped_bytes,omitempty"`
	// Harness is the process writing the log, set by Open (nil where
	// there is no /proc). A reader that finds it gone while Status still
	// says running reads the status as StatusLost.
	Harness *Process `json:"harness,omitempty"`
}

// StatusRunning is the status of a run whose session has not been closed:
// still running, or the harness died before Close.
const StatusRunning = "running"

// DefaultDir returns $XDG_DATA_HOME/harness/sessions, with the platform's
// data directory (adrg/xdg) when getenv reports no XDG_DATA_HOME.
func DefaultDir(getenv func(string) string) string {
	return xdgdir.Data(getenv, "sessions")
}

// Option configures Open.
type Option func(*Session)

// WithRedactor sets the redactor (default: DefaultRedactor, built from the
// process environment).
func WithRedactor(r *Redactor) Option { return func(s *Session) { s.red = r } }

// DefaultNativeMax is the size past which a run's native log, and its
// stderr log, take no more lines. A real agent's stdout is a few MB a
// run; an agent that floods its stdout (a loop printing) wrote 2.5 GB in
// 8 s, and a long-lived server (harness serve, mcp, acp) would fill the
// disk with such runs. The stream itself still carries every line.
const DefaultNativeMax = 1 << 30

// WithNativeMax sets the cap of the native and stderr logs, each (default
// DefaultNativeMax); 0 or less: no cap.
func WithNativeMax(n int64) Option { return func(s *Session) { s.nativeMax = n } }

// Session is the log of one run being written. Its methods are safe for
// concurrent use; after Close they return ErrClosed.
type Session struct {
	dir, run string
	red      *Redactor

	mu      sync.Mutex
	meta    Meta
	events  *os.File
	native  *os.File
	stderr  *os.File
	stderrW *bufio.Writer
	evBuf   lineBuf // event lines not yet written
	natBuf  lineBuf // stdout lines not yet written
	buffer  bool    // see WithBufferedEvents
	closed  bool
	onEvent func(line []byte) // see WithEventHook
	// nativeMax caps the native and stderr logs, each; see WithNativeMax.
	// stderrWritten counts the stderr log's bytes (the native log's are
	// natBuf's).
	nativeMax     int64
	stderrWritten int64
}

// A buffer of event or stdout lines is written when it holds bufSmall
// bytes (besides at Flush). Once floodWrites of those writes came in a row
// with no Flush between (4 MiB: the agent floods stdout faster than the
// harness takes it, so it never waits and never flushes), the buffer grows
// to bufLarge for the rest of the session. Measured in 256 MiB floods
// (medians of 4 interleaved pairs, under load): 1 MiB writes took the
// log's CPU over --no-log from 1.31x to 1.21x; but 1 MiB buffers from the
// start cost a run of 10k lines (1.7 MB) 1.13x -> 1.3x, in the page faults
// of their fresh memory. In 1 GiB floods (make bench's row, 7 pairs a
// figure), 2 MiB writes with 16 MiB reserved gave a median of 1.24x over 9
// figures against 1.26x over 8 for 1 MiB and 4 MiB; in interleaved runs
// with the log, 2.05 against 2.13 s of CPU (12 each). Smaller writes cost
// more (256 and 512 KiB: +5-10 %), and so did 4 MiB writes with 4 or 16
// MiB reserved: +60-80 %, nearly all of it in the kernel's copy of the
// buffer.
//
// Once large, the file's blocks are also allocated reserveAhead bytes
// ahead of the writes (fallocate, the size left as it is): ext4 then has
// no blocks to find at each write. Writing 1 GiB in 1 MiB writes took
// 0.19-0.20 s of sys without and 0.10-0.11 s with, 4 to 64 MiB ahead
// alike; at most reserveAhead is left allocated past the end of a file
// whose harness was killed before Close gave it back.
//
// And once large, what was written is sent to the disk behindStep bytes
// at a time, and each step is dropped from the page cache one step later,
// when the disk has it (sync_file_range and fadvise, neither waiting): a
// flood's log then holds a few steps of memory, not gigabytes. On this
// project's VMs, memory the kernel has not used for a while costs a host
// fault at its first touch, and a 1 GiB flood's 2 GiB of fresh page cache
// took its log's CPU over --no-log from 1.0 to 1.5-2.5 s (interleaved runs);
// writing behind, the same pages come back step after step and the log
// costs 0.35-0.45 s, of which submitting the writes is about 0.05 s. It
// also leaves the user's page cache alone: the log of a flood is not worth
// evicting anything for. Readers lose nothing: only pages the disk holds
// are dropped, and a reader that needs them again reads them from there.
const (
	bufSmall     = 64 << 10
	bufSlack     = 4 << 10 // room for the line that fills a buffer
	bufLarge     = 2 << 20
	floodWrites  = 64
	reserveAhead = 16 << 20
	behindStep   = 8 << 20
)

// lineBuf holds lines, each with its newline, until they are written.
type lineBuf struct {
	buf      []byte
	large    bool  // grown to bufLarge
	run      int   // writes in a row because buf was full
	written  int64 // bytes written to the file
	reserved int64 // the file's blocks are allocated up to here; -1: cannot be
	behind   int64 // writing out to the disk was started up to here; -1: cannot be
	dropped  int64 // dropped from the page cache up to here
}

// add appends line and a newline; it reports whether buf is full.
func (l *lineBuf) add(line []byte) bool {
	if l.buf == nil {
		// Made at its size once: grown by append from nothing, the two
		// buffers of a run left ~550 KB behind on the way to 64 KiB,
		// which brought on a collection in a run of 10k lines that had
		// none with --no-log.
		l.buf = make([]byte, 0, bufSmall+bufSlack)
	}
	l.buf = append(append(l.buf, line...), '\n')
	limit := bufSmall
	if l.large {
		limit = bufLarge
	}
	return len(l.buf) >= limit
}

// take empties the buffer and returns what it held, valid until the next
// add; full tells a write because the buffer was full from one at Flush.
func (l *lineBuf) take(full bool) []byte {
	b := l.buf
	l.buf = l.buf[:0]
	if !full {
		l.run = 0
		return b
	}
	if l.run++; l.run == floodWrites && !l.large {
		l.large, l.buf = true, make([]byte, 0, bufLarge+bufSlack)
	}
	return b
}

// writeTo takes what the buffer holds (as take) and writes it to w; it
// returns what it wrote, valid until the next add. what names the file in
// an error.
func (l *lineBuf) writeTo(w *os.File, full bool, what string) ([]byte, error) {
	b := l.take(full)
	if len(b) == 0 {
		return nil, nil
	}
	if l.large && l.reserved >= 0 && l.written+int64(len(b)) > l.reserved {
		if reserve(w, l.written, reserveAhead) != nil {
			l.reserved = -1 // not this file system: write as before
		} else {
			l.reserved = l.written + reserveAhead
		}
	}
	n, err := w.Write(b)
	l.written += int64(n)
	if err != nil {
		return nil, fmt.Errorf("logger: write %s: %w", what, err)
	}
	if l.large && l.behind >= 0 && l.written-l.behind >= behindStep {
		if writeBehind(w, l.dropped, l.behind, l.written) != nil {
			l.behind = -1 // not this file system: the kernel's own pace
		} else {
			l.dropped, l.behind = l.behind, l.written
		}
	}
	return b, nil
}

// release gives back the blocks reserved past the end of w.
func (l *lineBuf) release(w *os.File) error {
	if l.reserved <= l.written {
		return nil
	}
	l.reserved = 0
	return w.Truncate(l.written)
}

// ErrClosed is returned by a Session's methods after Close.
var ErrClosed = errors.New("logger: session closed")

// Open creates the log files of run in dir (creating dir 0700 if needed)
// and writes meta, with Run set to run, Status "running" and Start set to
// now when zero. It fails if the run already has logs there: a log is
// never overwritten. An existing dir that others may enter is tightened
// to the user's bits alone, or refused when shared (sticky, or not the
// user's).
func Open(dir, run string, meta Meta, opts ...Option) (*Session, error) {
	if err := validRunID(run); err != nil {
		return nil, err
	}
	s := &Session{dir: dir, run: run, nativeMax: DefaultNativeMax}
	for _, o := range opts {
		o(s)
	}
	if s.red == nil {
		s.red = DefaultRedactor()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("logger: %w", err)
	}
	if err := privateDir(dir); err != nil {
		return nil, err
	}
	var err error
	if s.events, err = createFile(s.path(ExtEvents)); err != nil {
		return nil, err
	}
	if s.native, err = createFile(s.path(ExtNative)); err != nil {
		s.events.Close()
		return nil, err
	}
	meta.Run = run
	if meta.Start.IsZero() {
		meta.Start = time.Now()
	}
	if meta.Status == "" {
		meta.Status = StatusRunning
	}
	if meta.Harness == nil {
		meta.Harness = self()
	}
	s.meta = meta
	if err := s.writeMeta(); err != nil {
		s.events.Close()
		s.native.Close()
		return nil, err
	}
	return s, nil
}

// privateDir makes sure only the user can enter dir: a directory of
// theirs open to others (made by hand, or by an older harness) is
// tightened to drop the group's and others' bits; a shared one (sticky,
// as /tmp, or someone else's) is refused rather than changed.
func privateDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("logger: %w", err)
	}
	perm := st.Mode().Perm()
	if perm&0o077 == 0 {
		return nil
	}
	refuse := fmt.Errorf("logger: session directory %s is open to other users (mode %04o) and shared, so not ours to tighten: chmod 700 it or choose another log_dir", dir, perm)
	if st.Mode()&os.ModeSticky != 0 {
		return refuse
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return refuse
	}
	if err := os.Chmod(dir, perm&^0o077); err != nil {
		return fmt.Errorf("logger: session directory %s is open to other users (mode %04o) and could not be tightened: %w", dir, perm, err)
	}
	return nil
}

func validRunID(run string) error {
	if run == "" || run == "." || run == ".." || strings.ContainsAny(run, `/\`) || strings.ContainsRune(run, 0) {
		return fmt.Errorf("logger: invalid run id %q", run)
	}
	return nil
}

func createFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("logger: %w", err)
	}
	return f, nil
}

func (s *Session) path(ext string) string { return filepath.Join(s.dir, s.run+ext) }

// Path returns the path of the session's normalized event stream.
func (s *Session) Path() string { return s.path(ExtEvents) }

// Run returns the run id.
func (s *Session) Run() string { return s.run }

// WithBufferedEvents makes WriteEvent buffer event lines until Flush
// (or until 64 KiB wait, 2 MiB in a flood, or Close) rather than write each at once: for a
// writer that calls Flush whenever no further event is imminent, as the
// harness does when it flushes its own output. A burst of events then
// costs one write, and a reader of the file still sees each event as
// soon as a reader of the harness's output does.
func WithBufferedEvents() Option { return func(s *Session) { s.buffer = true } }

// WriteEvent appends one encoded event line (without its newline) to
// <run>.ndjson, redacted, and writes it through to the file at once (with
// WithBufferedEvents: at the next Flush), so a crash of the harness loses
// no event already written.
func (s *Session) WriteEvent(line []byte) error {
	line = s.red.Redact(trimNewline(line))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if full := s.evBuf.add(line); full || !s.buffer {
		return s.writeEvents(full)
	}
	return nil
}

// writeEvents writes the buffered event lines, then hands them to the
// event hook, one by one. s.mu is held.
func (s *Session) writeEvents(full bool) error {
	buf, err := s.evBuf.writeTo(s.events, full, "events")
	if err != nil {
		return err
	}
	if s.onEvent != nil {
		for len(buf) > 0 {
			i := bytes.IndexByte(buf, '\n')
			s.onEvent(buf[:i+1])
			buf = buf[i+1:]
		}
	}
	return nil
}

// WriteNative records one of the agent's own lines (without its newline),
// redacted. stdout lines go to <run>.native.jsonl verbatim, one per line,
// so that the file is exactly what the agent printed and `harness parse`
// can normalize it again. stderr lines go to <run>.stderr.log, created on
// the first one, so they never corrupt the JSONL capture. Native lines are
// buffered; they reach the disk on Flush, when the buffer fills, and on
// Close.
func (s *Session) WriteNative(stream string, line []byte) error {
	line = s.red.Redact(trimNewline(line))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	size := int64(len(line)) + 1
	switch stream {
	case event.StreamStdout:
		if s.over(s.natBuf.written+int64(len(s.natBuf.buf)), size, &s.meta.NativeDropped) {
			return nil
		}
		if s.natBuf.add(line) {
			return s.writeNative(true)
		}
		return nil
	case event.StreamStderr:
		if s.over(s.stderrWritten, size, &s.meta.StderrDropped) {
			return nil
		}
		s.stderrWritten += size
		if s.stderrW == nil {
			f, err := createFile(s.path(ExtStderr))
			if err != nil {
				return err
			}
			s.stderr, s.stderrW = f, bufio.NewWriterSize(f, 16<<10)
		}
	default:
		return fmt.Errorf("logger: unknown stream %q", stream)
	}
	if _, err := s.stderrW.Write(line); err != nil {
		return fmt.Errorf("logger: write %s: %w", stream, err)
	}
	if err := s.stderrW.WriteByte('\n'); err != nil {
		return fmt.Errorf("logger: write %s: %w", stream, err)
	}
	return nil
}

// over reports whether a line of size bytes would take a log that holds
// held bytes past the cap, and counts it into dropped if so. Once a line
// was dropped, every later one is too: the log is a start, never one
// with holes. s.mu is held.
func (s *Session) over(held, size int64, dropped *int64) bool {
	if s.nativeMax <= 0 || *dropped == 0 && held+size <= s.nativeMax {
		return false
	}
	*dropped += size
	return true
}

// writeNative writes the buffered stdout lines. s.mu is held.
func (s *Session) writeNative(full bool) error {
	_, err := s.natBuf.writeTo(s.native, full, event.StreamStdout)
	return err
}

func trimNewline(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

// Flush writes buffered event and native lines to their files.
func (s *Session) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return s.flushLocked()
}

func (s *Session) flushLocked() error {
	err := errors.Join(s.writeEvents(false), s.writeNative(false))
	if s.stderrW != nil {
		err = errors.Join(err, s.stderrW.Flush())
	}
	return err
}

// Close flushes and closes the files and rewrites <run>.meta.json with
// final: its non-zero fields replace those given to Open, and End is set to
// now when zero. Close is idempotent; later calls return ErrClosed.
func (s *Session) Close(final Meta) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.closed = true
	err := s.flushLocked()
	err = errors.Join(err, s.evBuf.release(s.events), s.natBuf.release(s.native))
	err = errors.Join(err, s.events.Close(), s.native.Close())
	if s.stderr != nil {
		err = errors.Join(err, s.stderr.Close())
	}
	s.meta = mergeMeta(s.meta, final)
	if s.meta.End.IsZero() {
		s.meta.End = time.Now()
	}
	if s.meta.Status == StatusRunning && final.Status == "" {
		s.meta.Status = "unknown"
	}
	err = errors.Join(err, s.writeMeta())
	if err != nil {
		return fmt.Errorf("logger: close %s: %w", s.run, err)
	}
	return nil
}

func mergeMeta(m, f Meta) Meta {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&m.Agent, f.Agent)
	set(&m.AgentVersion, f.AgentVersion)
	set(&m.Model, f.Model)
	set(&m.PromptPreview, f.PromptPreview)
	set(&m.Cwd, f.Cwd)
	set(&m.Status, f.Status)
	set(&m.Signal, f.Signal)
	set(&m.SessionID, f.SessionID)
	set(&m.HarnessVersion, f.HarnessVersion)
	set(&m.Protocol, f.Protocol)
	set(&m.Permissions, f.Permissions)
	if f.Argv != nil {
		m.Argv = f.Argv
	}
	if !f.Start.IsZero() {
		m.Start = f.Start
	}
	if !f.End.IsZero() {
		m.End = f.End
	}
	if f.ExitCode != nil {
		m.ExitCode = f.ExitCode
	}
	if f.Usage != nil {
		m.Usage = f.Usage
	}
	if f.CostUSD != nil {
		m.CostUSD = f.CostUSD
		m.CostEstimated = f.CostEstimated
	}
	return m
}

// writeMeta writes s.meta, redacted, to a temporary file and renames it over
// <run>.meta.json, so a reader sees the old or the new summary, never half.
func (s *Session) writeMeta() error {
	m := s.meta
	m.PromptPreview = preview(s.red.RedactString(m.PromptPreview)) // redact first: a cut must not hide a key from the patterns
	if m.Argv != nil {
		argv := make([]string, len(m.Argv))
		for i, a := range m.Argv {
			argv[i] = s.red.RedactString(a)
		}
		m.Argv = argv
	}
	// Every field the agent or the user wrote is redacted; what harness
	// itself names (run id, agent id, protocol, permissions, status, version) is not, so that a
	// value that happens to equal one (--env A=claude) cannot break
	// 'sessions list' and 'reparse'.
	for _, f := range []*string{&m.AgentVersion, &m.Model, &m.Cwd, &m.Signal, &m.SessionID} {
		*f = s.red.RedactString(*f)
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("logger: encode meta: %w", err)
	}
	data = append(data, '\n')
	// Not synced: this is on every run's end path, and a run whose meta
	// a crash lost still loads (Load).
	if err := regfile.WriteFile(s.path(ExtMeta), data, 0o600); err != nil {
		return fmt.Errorf("logger: write meta: %w", err)
	}
	return nil
}

// preview cuts s to PromptPreviewLen characters, on a rune boundary.
func preview(s string) string {
	if utf8.RuneCountInString(s) <= PromptPreviewLen {
		return s
	}
	n := 0
	for i := range s {
		if n == PromptPreviewLen {
			return s[:i]
		}
		n++
	}
	return s
}
