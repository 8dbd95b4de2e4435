package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/atif"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/ansi"
	"github.com/agentharness/harness/internal/regfile"
	"github.com/agentharness/harness/logger"
	"github.com/agentharness/harness/otlp"
)

type sessionsCmd struct {
	Dir     string             `help:"Session log directory (default: $XDG_DATA_HOME/harness/sessions)." type:"path"`
	List    sessionsListCmd    `cmd:"" default:"1" help:"List stored runs, newest first."`
	Show    sessionsShowCmd    `cmd:"" help:"Print a run's metadata."`
	Replay  sessionsReplayCmd  `cmd:"" help:"Re-emit a run's event stream."`
	Reparse sessionsReparseCmd `cmd:"" help:"Re-normalize a run's native lines with today's adapter."`
	Export  sessionsExportCmd  `cmd:"" help:"Write a run's log files as a tar.gz, or its trajectory (--format atif)."`
	Prune   sessionsPruneCmd   `cmd:"" help:"Remove runs older than a duration."`
}

func (c *sessionsCmd) dir(e *env) (string, error) {
	if c.Dir != "" {
		return c.Dir, checkLogDir(c.Dir)
	}
	s, err := loadSettings(e, "")
	if err != nil {
		return "", err
	}
	dir := s.logDir(e)
	return dir, checkLogDir(dir)
}

// checkLogDir refuses a session log directory that is something else (a
// regular file, say), or one the user cannot read (its mode, a symlink
// loop, a file in its path), as a usage error, one every sessions command
// gives alike, before any run is read: reading it, list, prune and replay
// said 1, show and export 2. One that does not exist is no runs.
func checkLogDir(dir string) error {
	st, err := os.Stat(dir)
	if err == nil && !st.IsDir() {
		return usageErrorf("sessions: %s is not a directory", dir)
	}
	if err == nil {
		// Stat alone passes a directory the user may not list (no r:
		// opened) or whose files it may not reach (no x: their names
		// listed, each run unknown; "dir/." is looked up through it).
		var f *os.File
		if f, err = os.Open(dir); err == nil {
			f.Close()
			_, err = os.Stat(dir + string(filepath.Separator) + ".")
		}
	}
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is said once
	}
	return usageErrorf("sessions: %s cannot be read: %v", dir, err)
}

type sessionsListCmd struct {
	jsonFlag `embed:""`
}

func (c *sessionsListCmd) Run(e *env, parent *sessionsCmd) error {
	dir, err := parent.dir(e)
	if err != nil {
		return err
	}
	metas, whys, err := logger.ListChecked(dir)
	if err != nil {
		return withStatus(exitAgentFailed, err)
	}
	// A damaged meta's run is listed as rebuilt from its event log (no
	// prompt): said on stderr, as show says it, so stdout stays the list.
	for _, m := range metas {
		warnMadeUpMeta(e, "list", "listed", m.Run, whys[m.Run])
	}
	return printList(e, c.JSON, metas, "RUN\tAGENT\tSTATUS\tSTART\tDURATION\tPROMPT", func(m logger.Meta) string {
		dur := ""
		if !m.End.IsZero() {
			dur = formatDuration(m.End.Sub(m.Start))
		}
		return strings.Join([]string{ansi.TermSafe(m.Run), ansi.TermSafe(m.Agent), ansi.TermSafe(m.Status), m.Start.Local().Format(time.DateTime), dur, ansi.TermSafe(oneLineCut(m.PromptPreview, 50))}, "\t")
	})
}

// runArg is the run a sessions subcommand reads.
type runArg struct {
	ID string `arg:"" name:"run" help:"Run id or unique prefix."`
}

type sessionsShowCmd struct {
	runArg `embed:""`
}

func (c *sessionsShowCmd) Run(e *env, parent *sessionsCmd) error {
	dir, err := parent.dir(e)
	if err != nil {
		return err
	}
	m, why, err := logger.LoadChecked(dir, c.ID)
	if err != nil {
		return withStatus(exitUsage, err)
	}
	// What is shown then lacks the fields only the file has (the prompt,
	// argv, permissions): said, so that it is not taken for the run's.
	warnMadeUpMeta(e, "show", "shown", m.Run, why)
	return writeJSON(e, m)
}

// warnMadeUpMeta says on stderr, for sessions cmd, that the meta of run
// (shown: what cmd did with it) is rebuilt from its event log because its
// file does not decode (why); nothing when why is nil or the file is only
// not there yet (a run just starting).
func warnMadeUpMeta(e *env, cmd, shown, run string, why *logger.MetaError) {
	if why == nil || errors.Is(why, fs.ErrNotExist) {
		return
	}
	fmt.Fprintf(e.Stderr, "harness: warning: sessions %s: run %s: its meta %s does not decode (%s): %s is a meta rebuilt from its event log\n",
		cmd, ansi.TermSafe(run), oneLine(why.Path), oneLine(why.Err.Error()), shown)
}

type sessionsReplayCmd struct {
	runArg `embed:""`
	Speed  float64 `help:"Replay at this multiple of the original speed (1 = as recorded; 0 = at once); no pause lasts over 5s." default:"0"`
}

// Validate refuses a --speed that is no speed as a usage error, before
// any run is read: NaN would replay at once, +Inf is 0 said otherwise.
func (c *sessionsReplayCmd) Validate() error {
	if !(c.Speed >= 0 && !math.IsInf(c.Speed, 1)) {
		return fmt.Errorf("--speed %v: want a finite multiple, 0 or more (0 = at once)", c.Speed)
	}
	return nil
}

func (c *sessionsReplayCmd) Run(e *env, parent *sessionsCmd) error {
	dir, err := parent.dir(e)
	if err != nil {
		return err
	}
	out := &stickyWriter{w: e.Stdout}
	cut, err := logger.ReplayCut(dir, c.ID, out, c.Speed, time.Sleep)
	if cut > 0 {
		// Left out, as the exports leave it: stdout stays lines a reader
		// decodes. The log is still read (exit 0), as theirs is.
		id, _ := logger.Resolve(dir, c.ID)
		fmt.Fprintf(e.Stderr, "harness: warning: sessions replay: run %s: its log ends in a line cut short (%d bytes without a newline: its harness was stopped, or is still writing it), left out\n",
			ansi.TermSafe(id), cut)
	}
	if err != nil {
		if errors.Is(err, logger.ErrNotFound) || errors.Is(err, logger.ErrAmbiguous) {
			return withStatus(exitUsage, err) // the run asked for, as every sessions command
		}
		// The output, or a log that cannot be read (a directory or a
		// FIFO in its place): 1, as export says of the same log.
		return withStatus(exitAgentFailed, err)
	}
	return nil
}

type sessionsReparseCmd struct {
	runArg `embed:""`
	Raw    bool `help:"Also emit native events."`
}

func (c *sessionsReparseCmd) Run(e *env, parent *sessionsCmd) error {
	// The settings a run has: usage the agent reported without a cost is
	// priced as the run priced it.
	st, err := loadSettings(e, "")
	if err != nil {
		return err
	}
	dir := cmp.Or(parent.Dir, st.logDir(e))
	if err := checkLogDir(dir); err != nil {
		return err
	}
	m, why, err := logger.LoadChecked(dir, c.ID)
	if err != nil {
		return withStatus(exitUsage, err)
	}
	if m.Agent == "" {
		state := "is damaged"
		if why != nil && errors.Is(why, fs.ErrNotExist) {
			state = "is missing" // and no session_start in an event log says either
		}
		return withStatus(exitAgentFailed, fmt.Errorf("sessions reparse: run %s: no meta names its agent (%s %s)", m.Run,
			logger.Path(dir, m.Run, logger.ExtMeta), state))
	}
	// A log that cannot be read is 1, as one that does not decode. Read
	// as it is parsed, never whole: it may be huge (a run's last line
	// cut, then megabytes of zeros).
	native, err := logger.OpenFile(dir, m.Run, logger.ExtNative) // not a FIFO: it would wait for a writer
	if err != nil {
		return withStatus(exitAgentFailed, err)
	}
	defer native.Close()
	if m.NativeDropped > 0 {
		fmt.Fprintf(e.Stderr, "harness: sessions reparse: run %s: its native log holds the start of the agent's output only (%d bytes past the log's cap were left out)\n", m.Run, m.NativeDropped)
	}
	protocol, err := loggedProtocol(m.Protocol, native)
	if err != nil {
		return withStatus(exitAgentFailed, err)
	}
	// A live session's turns: their prompts and how the harness ended
	// them are in its recorded stream, not in the agent's lines.
	var rec *harness.SessionRecord
	if f, err := logger.OpenFile(dir, m.Run, logger.ExtEvents); err == nil {
		rec, err = harness.ReadSessionRecord(f)
		f.Close()
		if err != nil {
			return withStatus(exitAgentFailed, err)
		}
		// A session sent no prompt records no turn: its meta says it was one.
		rec.Live = rec.Live || m.Live
	}
	out := &stickyWriter{w: e.Stdout}
	enc := event.NewEncoder(out)
	// A failed write ends the parse: nobody would see the rest.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	_, err = harness.Parse(ctx, native, m.Agent, func(ev event.Event) {
		if out.err == nil && enc.Encode(ev) != nil {
			stop()
		}
	}, harness.ParseOptions{Raw: c.Raw, Protocol: protocol, Session: rec,
		// What the run was started with: its session_start's, and what its
		// protocol's client did (the requests it made, its answers).
		Model: m.Model, Cwd: m.Cwd, Permissions: m.Permissions, Resume: m.Resume,
		EstimateCost: st.library(e, false).EstimateCost})
	if out.err != nil {
		return withStatus(exitAgentFailed, fmt.Errorf("sessions reparse: writing: %w", out.err))
	}
	if err != nil {
		return withStatus(exitAgentFailed, err)
	}
	return nil
}

// sniffBytes is how much of a native log's first line tells its protocol
// (a JSON-RPC message names "jsonrpc" at its start).
const sniffBytes = 64 << 10

// loggedProtocol is harness.LoggedProtocol of native, a log open at its
// start, from at most its first sniffBytes; native is left at its start.
func loggedProtocol(recorded string, native *os.File) (string, error) {
	if recorded != "" {
		return recorded, nil
	}
	head, err := io.ReadAll(io.LimitReader(native, sniffBytes))
	if err != nil {
		return "", err
	}
	if _, err := native.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	return harness.LoggedProtocol("", head), nil
}

type sessionsExportCmd struct {
	runArg      `embed:""`
	Output      string `short:"o" help:"Write to this file instead of stdout." type:"path"`
	Format      string `default:"tar.gz" help:"What to write: tar.gz (the run's log files), atif (its trajectory, Harbor's ATIF JSON) or otlp-json (its trace as OTLP JSON, for an OpenTelemetry backend)."`
	OTLPContent bool   `name:"otlp-content" help:"otlp-json: also export tool arguments, output, diffs and the final answer (as the session log has them, redacted)."`
}

// sessionExports are the formats of 'sessions export': each writes run
// id of dir to w. A slice, not a map: it is laid out by the linker, with
// no work at start-up.
var sessionExports = []struct {
	format string
	write  func(c *sessionsExportCmd, e *env, dir, id string, w io.Writer) error
}{
	{"tar.gz", func(_ *sessionsExportCmd, e *env, dir, id string, w io.Writer) error {
		return logger.Export(dir, id, w, func(err error) {
			fmt.Fprintf(e.Stderr, "harness: warning: %s\n", oneLine(err.Error()))
		})
	}},
	{"atif", exportATIF},
	{"otlp-json", exportOTLPJSON},
}

// exportATIF writes the run's trajectory a few steps at a time: a run's
// log may be far bigger than memory should be.
func exportATIF(_ *sessionsExportCmd, _ *env, dir, id string, w io.Writer) error {
	return atif.Export(dir, id, "", w)
}

func (c *sessionsExportCmd) Run(e *env, parent *sessionsCmd) error {
	var export func(c *sessionsExportCmd, e *env, dir, id string, w io.Writer) error
	var formats []string
	for _, x := range sessionExports {
		formats = append(formats, x.format)
		if x.format == c.Format {
			export = x.write
		}
	}
	if export == nil {
		return usageErrorf("sessions export: unknown --format %q (want %s)", c.Format, strings.Join(formats, ", "))
	}
	if c.OTLPContent && c.Format != "otlp-json" {
		return usageErrorf("sessions export: --otlp-content is for --format otlp-json, not %s", c.Format)
	}
	dir, err := parent.dir(e)
	if err != nil {
		return err
	}
	id, err := logger.Resolve(dir, c.ID) // first: an unknown run leaves no empty -o file behind
	if err != nil {
		return withStatus(exitUsage, err)
	}
	if c.Output == "" {
		if err := export(c, e, dir, id, e.Stdout); err != nil {
			// The run exists: its log could not be read (or the output written).
			return withStatus(exitAgentFailed, err)
		}
		return nil
	}
	// The export replaces -o: it must not be a file the export reads.
	if out, err := os.Stat(c.Output); err == nil {
		for _, ext := range []string{logger.ExtEvents, logger.ExtNative, logger.ExtStderr, logger.ExtMeta, logger.ExtTrajectory} {
			if in, err := os.Stat(logger.Path(dir, id, ext)); err == nil && os.SameFile(in, out) {
				return usageErrorf("sessions export: -o %s is a file of run %s: the export would replace it", c.Output, id)
			}
		}
	}
	return writeFileWith(c.Output, func(w io.Writer) error { return export(c, e, dir, id, w) })
}

// writeFileWith writes path with write, never half: a regular file (or
// none yet) gets a temporary file beside it, with the file's mode (0600
// for a new one), renamed over it once write succeeded, so a failed write
// leaves it as it was. Anything else
// (a device, a FIFO) is written in place and never removed: harness did
// not make it. A path that cannot be opened is a usage error; a failed
// write, exit 1.
func writeFileWith(path string, write func(io.Writer) error) error {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return withStatus(exitUsage, err)
		}
		err = write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return withStatus(exitAgentFailed, err)
		}
		return nil
	}
	target, mode := path, os.FileMode(0o600) // it holds the run's logs
	if t, err := filepath.EvalSymlinks(path); err == nil {
		target = t // a link stays a link: the export goes where it points
	}
	if st, err := os.Stat(target); err == nil {
		mode = st.Mode().Perm() // replaced, it keeps its mode
	}
	tmp := "" // set once the temporary file exists: an error before it is a directory that cannot be written
	err := regfile.Replace(target, mode, func(f *os.File) error {
		tmp = f.Name()
		return write(f)
	})
	switch {
	case err == nil:
		return nil
	case tmp == "":
		return withStatus(exitUsage, outputErr(err, "", path))
	default:
		return withStatus(exitAgentFailed, outputErr(err, tmp, path))
	}
}

// outputErr makes err, when it is about file tmp (any file when tmp is
// ""), name path instead: the user gave path, the temporary file is gone.
func outputErr(err error, tmp, path string) error {
	var pe *os.PathError
	if errors.As(err, &pe) && (tmp == "" || pe.Path == tmp) {
		pe.Path = path
	}
	var le *os.LinkError // a failed rename
	if errors.As(err, &le) && le.Old == tmp {
		return fmt.Errorf("%s: %w", path, le.Err)
	}
	return err
}

type sessionsPruneCmd struct {
	OlderThan time.Duration `required:"" help:"Remove runs that ended longer ago than this (e.g. 720h); a running run is kept, one whose harness died goes by its last write."`
	DryRun    bool          `help:"Remove nothing: print the ids of the runs that would be removed."`
	List      bool          `short:"l" help:"Print the id of each run removed, one a line, before the count."`
}

// Validate refuses a negative --older-than as a usage error, before any
// run is read.
func (c *sessionsPruneCmd) Validate() error {
	if c.OlderThan < 0 {
		return fmt.Errorf("--older-than %s: an age cannot be negative", c.OlderThan)
	}
	return nil
}

func (c *sessionsPruneCmd) Run(e *env, parent *sessionsCmd) error {
	dir, err := parent.dir(e)
	if err != nil {
		return err
	}
	prune, verb := logger.Prune, "removed"
	if c.DryRun {
		prune, verb = logger.Prunable, "would remove"
	}
	ids, err := prune(dir, c.OlderThan, time.Now())
	// What was removed before an error is still told.
	w := bufio.NewWriter(e.Stdout)
	if c.List || c.DryRun {
		for _, id := range ids {
			fmt.Fprintln(w, id)
		}
	}
	fmt.Fprintf(w, "%s %d run(s)\n", verb, len(ids))
	if ferr := w.Flush(); err == nil && ferr != nil {
		return ferr
	}
	if err != nil {
		return withStatus(exitAgentFailed, err)
	}
	return nil
}

// exportOTLPJSON writes a logged run's trace as OTLP JSON (one
// ExportTraceServiceRequest): what --otlp would have sent.
func exportOTLPJSON(c *sessionsExportCmd, e *env, dir, id string, w io.Writer) error {
	m, err := logger.Load(dir, id)
	if err != nil {
		return err
	}
	f, err := logger.OpenFile(dir, id, logger.ExtEvents)
	if err != nil {
		return err
	}
	defer f.Close()
	evs, _, err := event.ReadLog(f) // as the atif export: a last line cut mid-write is left out
	if err != nil {
		return fmt.Errorf("%s: %w", id, err)
	}
	res, err := otlp.ResourceFromEnv(e.Getenv)
	if err != nil {
		return err
	}
	tr := otlp.TraceOf(otlp.RunInfo{Run: id, Agent: m.Agent, Model: m.Model, Protocol: m.Protocol}, c.OTLPContent,
		evs, res, version, cmp.Or(m.Status, "unknown"))
	b, err := json.Marshal(tr)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
