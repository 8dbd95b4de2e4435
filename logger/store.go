package logger

import (
	"archive/tar"
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/regfile"
	"github.com/agentharness/harness/linescan"
)

// ErrNotFound means no run in the directory matches the id or prefix.
var ErrNotFound = errors.New("logger: no such run")

// ErrAmbiguous means a run id prefix matches more than one run.
var ErrAmbiguous = errors.New("logger: ambiguous run id prefix")

var runExts = []string{ExtEvents, ExtNative, ExtStderr, ExtMeta, ExtTrajectory}

// Path returns the path of run id's file ext (ExtEvents, ExtNative,
// ExtStderr, ExtMeta or ExtTrajectory) in the session directory dir: the one place a
// run's file is named, for readers that open it themselves. An id that is
// not a plain file name (empty, "." or "..", or holding a separator or
// NUL: one Open refuses) names no file of the store, wherever it came
// from: Path returns "", which every open, stat and remove fails on
// (ENOENT), so that such an id never reaches a file outside dir.
func Path(dir, id, ext string) string {
	if validRunID(id) != nil {
		return ""
	}
	return filepath.Join(dir, id+ext)
}

// ErrNotRegular is why a run's file that is not a regular file (a FIFO,
// a device, a directory) or is a symbolic link out of the store is not
// opened, in the *fs.PathError the open returns: a FIFO's open would
// wait for a writer, a device might never end (regfile), and a link
// made by whoever could write in the store (an agent) would have its
// readers (export, serve) hand out any file of the host.
var ErrNotRegular = regfile.ErrNotRegular

// OpenFile opens run id's file ext in dir for reading, as Path names it,
// refusing one that is not a regular file of dir (ErrNotRegular): a
// symbolic link is followed only while it stays in dir, not when it
// leads out of it or is absolute.
func OpenFile(dir, id, ext string) (*os.File, error) {
	if Path(dir, id, ext) == "" {
		return nil, &fs.PathError{Op: "open", Path: id + ext, Err: fs.ErrNotExist}
	}
	return regfile.OpenInDir(dir, id+ext)
}

// ReadFile reads run id's file ext in dir whole, as OpenFile opens it.
func ReadFile(dir, id, ext string) ([]byte, error) {
	f, err := OpenFile(dir, id, ext)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// readDir lists a session directory (a variable for tests that count
// the listings).
var readDir = os.ReadDir

// runIDs returns the run ids that have at least one log file in dir.
func runIDs(dir string) ([]string, error) {
	entries, err := readDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("logger: %w", err)
	}
	seen := map[string]bool{}
	var ids []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		for _, ext := range runExts {
			if id, ok := strings.CutSuffix(name, ext); ok && id != "" && !seen[id] {
				seen[id] = true
				ids = append(ids, id)
				break
			}
		}
	}
	return ids, nil
}

// Resolve returns the run id in dir that run names: the id itself, or a
// prefix of exactly one id. The "run_" prefix may be left out. It returns
// ErrNotFound or ErrAmbiguous (wrapped, with the candidates) otherwise.
func Resolve(dir, run string) (string, error) {
	if run == "" {
		return "", fmt.Errorf("%w: empty run id", ErrNotFound)
	}
	if hasFiles(dir, run) {
		return run, nil // the id itself, as the listing below would find first
	}
	ids, err := runIDs(dir)
	if err != nil {
		return "", err
	}
	for _, prefix := range []string{run, "run_" + run} {
		if slices.Contains(ids, prefix) {
			return prefix, nil
		}
		var matches []string
		for _, id := range ids {
			if strings.HasPrefix(id, prefix) {
				matches = append(matches, id)
			}
		}
		slices.Sort(matches)
		switch len(matches) {
		case 0:
			continue
		case 1:
			return matches[0], nil
		default:
			// A short prefix may match every run of a large store: the
			// error stays one short line (serve sends it to a client).
			shown, more := matches, ""
			if len(matches) > maxAmbiguousShown {
				shown, more = matches[:maxAmbiguousShown], fmt.Sprintf(" and %d more", len(matches)-maxAmbiguousShown)
			}
			return "", fmt.Errorf("%w: %q matches %s%s", ErrAmbiguous, run, strings.Join(shown, ", "), more)
		}
	}
	return "", fmt.Errorf("%w: %q in %s", ErrNotFound, run, dir)
}

// maxAmbiguousShown is how many of the runs an ambiguous prefix matches
// its error names.
const maxAmbiguousShown = 8

// hasFiles reports whether id, a plain file name, has a log file in dir,
// by looking its files up: serve resolves every run it starts or is
// asked about, and listing the directory for that made each request cost
// a read of every session's name (half of serve's CPU at 6600 files).
func hasFiles(dir, id string) bool {
	if strings.HasPrefix(id, ".") || strings.ContainsAny(id, "/\\\x00") {
		return false // not a name runIDs could list
	}
	for _, ext := range runExts {
		if fi, err := os.Lstat(Path(dir, id, ext)); err == nil && !fi.IsDir() {
			return true
		}
	}
	return false
}

// Load returns the meta of the run named by run (an id or unique prefix).
// A run whose meta file is missing or unreadable still loads, with Run set
// and its start, agent, version, model and cwd its log's session_start's
// (Start, without one, its oldest file's modification time). A meta still
// saying running whose harness process is gone (Process.Gone) loads with
// Status StatusLost. Either, when its event log ends with the result,
// loads as that result says (settle).
func Load(dir, run string) (Meta, error) {
	m, _, err := LoadChecked(dir, run)
	return m, err
}

// MetaError is why Load made a run's meta up rather than read it from
// the run's meta file, Path: Err wraps fs.ErrNotExist when there is no
// such file, ErrNotRegular when it is not a regular file of the store,
// ErrMetaMalformed when it is no meta of the run (it does not decode, is
// over 16 MiB, or names another run), or is the error reading it.
type MetaError struct {
	Path string
	Err  error
}

func (e *MetaError) Error() string { return "logger: " + e.Path + ": " + e.Err.Error() }

func (e *MetaError) Unwrap() error { return e.Err }

// ErrMetaMalformed is why a meta file that was read is no meta of its
// run (in a MetaError).
var ErrMetaMalformed = errors.New("malformed")

// LoadChecked is Load, and also says why the meta it returns is made up
// (a *MetaError), or nil when it is the one the run's meta file holds:
// what a reader showing the meta to a person tells them, since a made-up
// meta lacks the fields only the file has (prompt_preview, argv, …).
func LoadChecked(dir, run string) (Meta, *MetaError, error) {
	id, err := Resolve(dir, run)
	if err != nil {
		return Meta{}, nil, err
	}
	m, why := loadMetaWhy(dir, id)
	return m, why, nil
}

func loadMetaWhy(dir, id string) (Meta, *MetaError) {
	m, why, _ := readMetaWhy(dir, id)
	m, _ = settle(dir, m, why == nil)
	return m, why
}

// settle gives a meta that does not say how its run ended (running, lost,
// or no meta file: unknown) the end its event log records, and reports
// whether it did. The log's stream is the record: a log whose last line
// is the result is a run that ended, whatever became of the harness that
// was to rewrite the meta (killed between the two, or not there yet),
// and readers (sessions list, serve's run list) say so alike. The status,
// end time, exit, usage, cost and session id are the result's, as Close
// would have written them. A run with no meta file, ended or not, takes
// its start, agent, version, model and cwd from its session_start: its
// files' times are not when it started (the log is written after its
// first event; a copy has the time of the copy). Only the log's ends are
// read, whatever its size.
func settle(dir string, m Meta, stored bool) (Meta, bool) {
	if stored && m.Status != StatusRunning && m.Status != StatusLost {
		return m, false // final: Close wrote it from the result
	}
	// A stored meta wants only the result: the head of a log with no
	// newline would be read up to a line's cap for a first line no one
	// uses.
	read := ReadEnds
	if stored {
		read = ReadLast
	}
	ends, err := read(dir, m.Run, event.MaxLineBytes)
	if err != nil {
		return m, false
	}
	if !stored {
		if first, err := event.Decode(ends.First); err == nil {
			if ss, ok := first.Body.(*event.SessionStart); ok {
				if first.TS > 0 {
					m.Start = time.UnixMilli(first.TS)
				}
				m.Agent = cmp.Or(m.Agent, ss.Agent)
				m.AgentVersion = cmp.Or(m.AgentVersion, ss.AgentVersion)
				m.Model = cmp.Or(m.Model, ss.Model)
				m.Cwd = cmp.Or(m.Cwd, ss.Cwd)
			}
		}
	}
	if ends.Last == nil {
		return m, false
	}
	last, err := event.Decode(ends.Last)
	if err != nil {
		return m, false
	}
	r, ok := last.Body.(*event.Result)
	if !ok || r.Status == "" {
		return m, false
	}
	u := r.Usage
	m.Status, m.ExitCode, m.Signal, m.Usage = r.Status, r.ExitCode, r.Signal, &u
	if r.CostUSD != nil {
		m.CostUSD, m.CostEstimated = r.CostUSD, r.CostEstimated
	}
	m.SessionID = cmp.Or(r.SessionID, m.SessionID)
	if m.End.IsZero() && last.TS > 0 {
		m.End = time.UnixMilli(last.TS)
	}
	return m, true
}

// readMetaFile is loadMeta; stored is false when the meta file could not be
// read (it may not be written yet), and the meta is made up. A meta is
// only that of the run its file name names: one whose "run" says another
// id (forged, or copied by hand) is no meta of this store, and is read as
// a missing one, since the id it holds is what readers, Prune among
// them, would open and remove.
func readMetaFile(dir, id string) (m Meta, stored bool) {
	m, stored, _ = readMetaStamped(dir, id)
	return m, stored
}

// maxMetaBytes bounds the read of a meta file: one over it is read as a
// malformed one, and not read at all when its size says so. A meta's one
// field of unbounded size is Argv, and execve takes at most 6 MiB of
// argv and environment together (3/4 of _STK_LIM), each string at most
// 128 KiB (and the prompt is not in it): 16 MiB leaves room for JSON's
// escapes of such an argv. A bigger one is no meta harness wrote (a 3 GB
// one took serve's memory to 13 GB).
const maxMetaBytes = 16 << 20

// readMetaStamped is readMetaFile; bad is the stat of a meta file that
// was read and is no meta of this run (malformed, over maxMetaBytes,
// another run's), so that a caller can tell the same file later from a
// changed one without reading it again (Index). It is nil otherwise,
// and when the file could not be opened or read.
func readMetaStamped(dir, id string) (m Meta, stored bool, bad os.FileInfo) {
	m, why, bad := readMetaWhy(dir, id)
	return m, why == nil, bad
}

// readMetaWhy is readMetaStamped; why is nil when the meta is the file's,
// and says why it was made up otherwise.
func readMetaWhy(dir, id string) (m Meta, why *MetaError, bad os.FileInfo) {
	f, err := OpenFile(dir, id, ExtMeta)
	if err == nil {
		m, bad, err = decodeMeta(f, id)
		f.Close()
	}
	if err == nil {
		if m.Status == StatusRunning && m.Harness.Gone() {
			m.Status = StatusLost
		}
		return m, nil, nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is the MetaError's
	}
	return madeUpMeta(dir, id), &MetaError{Path: Path(dir, id, ExtMeta), Err: err}, bad
}

// decodeMeta reads the meta of run id from its open file f; bad is the
// stat of a file that is no meta of the run (ErrMetaMalformed).
func decodeMeta(f *os.File, id string) (m Meta, bad os.FileInfo, err error) {
	fi, err := f.Stat()
	if err != nil {
		return Meta{}, nil, err
	}
	if fi.Size() > maxMetaBytes {
		return Meta{}, fi, fmt.Errorf("%w: over %d bytes", ErrMetaMalformed, maxMetaBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxMetaBytes+1)) // it may have grown since
	if err != nil {
		return Meta{}, nil, err
	}
	if len(data) > maxMetaBytes {
		return Meta{}, fi, fmt.Errorf("%w: over %d bytes", ErrMetaMalformed, maxMetaBytes)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return Meta{}, fi, fmt.Errorf("%w: %w", ErrMetaMalformed, err)
	}
	if m.Run != id {
		return Meta{}, fi, fmt.Errorf("%w: it names run %q", ErrMetaMalformed, m.Run)
	}
	return m, nil, nil
}

// madeUpMeta is the meta of run id when it has none of its own: status
// unknown, started at its oldest file's modification time (a link's own:
// a target out of the store is not the run's), until settle reads its
// session_start.
func madeUpMeta(dir, id string) Meta {
	m := Meta{Run: id, Status: "unknown"}
	for _, ext := range runExts {
		if fi, err := os.Lstat(Path(dir, id, ext)); err == nil {
			if m.Start.IsZero() || fi.ModTime().Before(m.Start) {
				m.Start = fi.ModTime()
			}
		}
	}
	return m
}

// List returns the meta of every run in dir, newest first (by Start, then
// by id, which for ULID ids is creation order). A missing dir is no runs.
func List(dir string) ([]Meta, error) {
	out, _, err := ListChecked(dir)
	return out, err
}

// ListChecked is List, and also says, by run id, why each meta it made
// up rather than read from the run's meta file is made up (LoadChecked's
// *MetaError): runs whose meta is the file's are not in it. It reads no
// more than List.
func ListChecked(dir string) ([]Meta, map[string]*MetaError, error) {
	ids, err := runIDs(dir)
	if err != nil {
		return nil, nil, err
	}
	out := make([]Meta, 0, len(ids))
	var whys map[string]*MetaError
	for _, id := range ids {
		m, why := loadMetaWhy(dir, id)
		if why != nil {
			if whys == nil {
				whys = make(map[string]*MetaError)
			}
			whys[m.Run] = why
		}
		out = append(out, m)
	}
	sortMetas(out)
	return out, whys, nil
}

// MaxReplayWait bounds each wait of Replay: a pause longer than this (at
// the speed asked for) is replayed as this long. A log may hold pauses of
// minutes (a tool call; the idle budget is 5m by default), during which
// nothing arrives to be watched, and a ts forged, corrupted or taken from
// a clock that jumped may be years from its neighbour's: a few seconds
// still show a pause as one.
const MaxReplayWait = 5 * time.Second

// Replay writes the stored event stream of run to w, one line at a time,
// each as the log has it; a line longer than the stream allows
// (event.MaxLineBytes: a corrupted log) is left out, as Tail leaves it.
// speed 0 writes as fast as w takes it; speed s > 0 waits, between two
// lines, the difference of their "ts" divided by s (1 = original timing),
// at most MaxReplayWait, by calling sleep (time.Sleep when nil). A line
// without a usable ts, or whose ts is not after the one before it, is
// written without waiting. A last line without a newline is written
// with one when it is a whole JSON value, and left out otherwise (see
// ReplayCut).
func Replay(dir, run string, w io.Writer, speed float64, sleep func(time.Duration)) error {
	_, err := ReplayCut(dir, run, w, speed, sleep)
	return err
}

// ReplayCut is Replay, and returns cut: the length of the log's last
// line when Replay left it out because it has no newline and is not a
// whole JSON value (or is over the cap). That is the start of a line
// its harness was killed writing, or is writing still: written, it would
// end the output in a line no reader decodes. 0 otherwise.
func ReplayCut(dir, run string, w io.Writer, speed float64, sleep func(time.Duration)) (cut int64, err error) {
	if !(speed >= 0) { // NaN too, which would replay at once
		return 0, fmt.Errorf("logger: replay speed %v is not 0 or more", speed)
	}
	if sleep == nil {
		sleep = time.Sleep
	}
	id, err := Resolve(dir, run)
	if err != nil {
		return 0, err
	}
	f, err := OpenFile(dir, id, ExtEvents)
	if err != nil {
		return 0, fmt.Errorf("logger: %w", err)
	}
	defer f.Close()
	bw := bufio.NewWriter(w)
	var prevTS int64 = -1
	// Each newline ends one line: a line handed over past the newlines
	// read is the rest of the file after the last one.
	nl := &newlineCounter{r: f}
	var lines int64
	// A line over the stream's cap is cut by linescan: left out whole.
	err = linescan.Scan(nl, event.MaxLineBytes, func(line []byte, dropped int64) error {
		if lines++; lines > nl.n && (dropped > 0 || !json.Valid(line)) {
			cut = int64(len(line)) + dropped
			return nil
		}
		if dropped > 0 {
			return nil
		}
		if speed > 0 {
			var env struct {
				TS *int64 `json:"ts"`
			}
			if json.Unmarshal(line, &env) == nil && env.TS != nil {
				if prevTS >= 0 && *env.TS > prevTS {
					if err := bw.Flush(); err != nil {
						return err
					}
					sleep(replayWait(*env.TS-prevTS, speed))
				}
				prevTS = *env.TS
			}
		}
		if _, err := bw.Write(line); err != nil {
			return err
		}
		return bw.WriteByte('\n')
	})
	if err != nil {
		return cut, fmt.Errorf("logger: replay %s: %w", id, err)
	}
	return cut, bw.Flush()
}

// newlineCounter reads r and counts, in n, the newlines read.
type newlineCounter struct {
	r io.Reader
	n int64
}

func (c *newlineCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(bytes.Count(p[:n], []byte{'\n'}))
	return n, err
}

// replayWait is the wait for a gap of gapMS > 0 milliseconds at speed > 0:
// the gap divided by speed, at most MaxReplayWait (compared before the
// conversion, which a gap of years at a low speed would overflow).
func replayWait(gapMS int64, speed float64) time.Duration {
	d := float64(gapMS) * float64(time.Millisecond) / speed
	if !(d < float64(MaxReplayWait)) { // NaN too
		return MaxReplayWait
	}
	return time.Duration(d)
}

// Prune removes every run in dir that ended more than olderThan before
// now, and returns the removed ids, sorted. A run whose harness is alive
// (its meta says running and names a process of this machine's boot and
// pid namespace that is still there) is never removed, however old: it
// is being written. A run closed with an end time ended then; any other
// run ended at the last modification of its files: one lost (its harness
// died before closing it), one whose meta names no process or one of
// elsewhere (no /proc, another machine: not judged, so taken for over once
// it wrote nothing for olderThan), and one with no meta of its own. A run
// with no meta file whose files were written in the last 10 s may be
// starting (its writer creates the log, then the meta) and is kept.
func Prune(dir string, olderThan time.Duration, now time.Time) ([]string, error) {
	ids, err := Prunable(dir, olderThan, now)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, id := range ids {
		ok := true
		for _, ext := range runExts {
			if err := os.Remove(Path(dir, id, ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
				ok = false
			}
		}
		if ok {
			removed = append(removed, id)
		}
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("logger: prune: %w", errors.Join(errs...))
	}
	return removed, nil
}

// Prunable returns the ids, sorted, of the runs Prune would remove with
// the same arguments, and removes nothing: what `sessions prune
// --dry-run` shows.
func Prunable(dir string, olderThan time.Duration, now time.Time) ([]string, error) {
	if olderThan < 0 {
		return nil, fmt.Errorf("logger: prune age %v is negative", olderThan)
	}
	ids, err := runIDs(dir)
	if err != nil {
		return nil, err
	}
	cutoff := now.Add(-olderThan)
	var over []string
	for _, id := range ids {
		m, stored := readMetaFile(dir, id)
		if at, ended := endedAt(dir, m, stored, now); ended && at.Before(cutoff) {
			over = append(over, m.Run)
		}
	}
	slices.Sort(over)
	return over, nil
}

// endedAt is when the run of meta m (stored: read from its file) ended,
// as Prune judges it; over is false for a run that may still be written:
// its harness alive, or, with no meta file yet, written in the last
// metaGrace.
func endedAt(dir string, m Meta, stored bool, now time.Time) (at time.Time, over bool) {
	if m.Status == StatusRunning && alive(m.Harness) {
		return time.Time{}, false
	}
	if stored && m.Status != StatusRunning && m.Status != StatusLost && !m.End.IsZero() {
		return m.End, true
	}
	at = lastWrite(dir, m.Run)
	if at.IsZero() {
		at = m.Start
	}
	if !stored && now.Sub(at) < metaGrace && !hasMeta(dir, m.Run) {
		return time.Time{}, false
	}
	return at, true
}

// hasMeta reports whether run id has a meta file in dir, readable or not.
func hasMeta(dir, id string) bool {
	_, err := os.Lstat(Path(dir, id, ExtMeta))
	return !errors.Is(err, fs.ErrNotExist)
}

// alive reports whether p is known to be running: it names a process of
// this machine's boot and pid namespace, and that process is there. A nil
// p, or one of elsewhere, is neither known alive nor known gone.
func alive(p *Process) bool {
	return p != nil && p.PID > 0 && p.NS != "" && p.NS == selfNS() && !p.Gone()
}

// lastWrite is the latest modification time of run id's files in dir,
// zero when none is there.
func lastWrite(dir, id string) time.Time {
	var last time.Time
	for _, ext := range runExts {
		if fi, err := os.Lstat(Path(dir, id, ext)); err == nil && fi.ModTime().After(last) {
			last = fi.ModTime()
		}
	}
	return last
}

// Export writes the log files of run to w as a gzip-compressed tar archive
// whose entries are named <run>/<run><ext>, in the order meta, events,
// native, stderr, trajectory (the files that exist). Tar keeps each file byte for byte,
// so an exported native capture can be fed to `harness parse` unchanged.
// A file of the run that cannot be opened (not a regular file of the
// store, as OpenFile refuses it: a FIFO, a device, a symbolic link out
// of the store; unreadable) is left out, and why is handed to warn (when
// not nil) once the archive is written; with no file left to export, the
// first of them is the error.
func Export(dir, run string, w io.Writer, warn func(error)) error {
	id, err := Resolve(dir, run)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(w) // writes nothing before the first entry
	tw := tar.NewWriter(zw)
	var left []error
	added := 0
	for _, ext := range []string{ExtMeta, ExtEvents, ExtNative, ExtStderr, ExtTrajectory} {
		f, err := OpenFile(dir, id, ext)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			left = append(left, err)
			continue
		}
		err = addFile(tw, f, id+"/"+id+ext)
		f.Close()
		if err != nil {
			return fmt.Errorf("logger: export %s: %w", id, err)
		}
		added++
	}
	if added == 0 {
		if len(left) > 0 {
			return fmt.Errorf("logger: export %s: %w", id, left[0]) // nothing exported: why, in one line
		}
		return fmt.Errorf("%w: %s has no file left", ErrNotFound, id) // removed since Resolve
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("logger: export %s: %w", id, err)
	}
	if err := zw.Close(); err != nil {
		return err
	}
	for _, err := range left {
		if warn == nil {
			break
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = fmt.Errorf("%s left out: %w", filepath.Base(pe.Path), pe.Err)
		}
		warn(fmt.Errorf("export %s: %w", id, err))
	}
	return nil
}

func addFile(tw *tar.Writer, f *os.File, name string) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	hdr := &tar.Header{Name: name, Mode: 0o600, Size: fi.Size(), ModTime: fi.ModTime(), Typeflag: tar.TypeReg}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err = io.CopyN(tw, f, fi.Size())
	return err
}
