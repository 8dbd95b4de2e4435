package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/mapfile"
	"github.com/agentharness/harness/process"
)

type parseCmd struct {
	Agent    string `short:"a" required:"" help:"Agent that produced the stream (${agents}, or an alias)."`
	Raw      bool   `help:"Also emit each native line as a native event, before the events derived from it."`
	Output   string `short:"o" help:"Write the stream to this file instead of stdout." type:"path"`
	File     string `arg:"" optional:"" default:"-" help:"Native stream to read (one file, not a directory); - or nothing for stdin."`
	Protocol string `help:"The stream's protocol: cli (the agent's headless output, the default), acp (an ACP agent's stdout), stream-json (Claude Code's with --input-format stream-json) or app-server (codex app-server's stdout)." enum:"${protocols}," default:""`
	Resume   string `help:"With --protocol acp: the agent's session the captured run continued (its session log's \"resume\"), which the answer that opened it does not name." placeholder:"SESSION"`
}

// Run normalizes the stream. Exit status: 0 when the agent's stream ends in
// success, 1 when it reports an error or ends without its terminal event,
// its output cannot be written (quietly when its reader left) or the file
// was shortened while it was read (it is mapped, not copied), 2 for an
// unknown agent, a protocol it does not speak, an -o that is the input or
// an unreadable file (a directory among them, also as stdin: one run is
// one stream, and parsing several files as one would mix their runs).
func (c *parseCmd) Run(e *env) (err error) {
	if _, err := harness.Adapter(c.Agent); err != nil {
		return withStatus(exitUsage, err)
	}
	if c.Resume != "" && c.Protocol != harness.ProtocolACP {
		// Another protocol's lines name the session they continue: the
		// flag would change nothing.
		return usageErrorf("parse: --resume is for --protocol acp, whose answer that opens a resumed session names none")
	}
	if os.Getenv("GOGC") == "" {
		// What a parse keeps is small (a few MB) and nearly everything it
		// allocates dies within a line: at the default the collector
		// would run every 4 MB of a stream that may be gigabytes.
		debug.SetGCPercent(400)
		if os.Getenv("GOMEMLIMIT") == "" {
			// ... but at 400 the heap would grow five times as fast as
			// what the parse must keep (a hash per ended tool call):
			// peak RSS 44 MB at 10 MB of gemini stream, 59 MB at 100
			// MB; codex 72 MB at 150 MB. Under this limit it stays at 37
			// to 41 MB from 10 to 150 MB, for the same instructions at
			// 10 MB and 3 % more at 150 MB (callgrind), where the
			// collector runs more often.
			debug.SetMemoryLimit(parseMemoryLimit)
			// And the limit alone paces the collector: at 400 a parse
			// keeping little ran below the limit, one keeping more (a
			// longer stream: more ended calls) at it, and its peak RSS
			// grew with the stream (claude 33.0 MB at 200 MB of stream,
			// 41.1 MB at 800 MB: the bench's flatness bound is 1.25x).
			// Without GOGC it is 40.5 and 41.2 MB. paceMemoryLimit keeps
			// the limit 16 MiB above what is kept, so the collector
			// never runs back to back.
			debug.SetGCPercent(-1)
			stopPacing := paceMemoryLimit(parseMemoryLimit)
			defer stopPacing()
		}
	}
	in := e.Stdin
	var mapped []byte
	if c.File != "-" {
		f, err := os.Open(c.File)
		if err != nil {
			return usageErrorf("parse: %v", err)
		}
		defer f.Close()
		in = f
		if err := checkParseInput(in, c.File, c.Output); err != nil {
			return err
		}
		// A file named is read from its start: mapped, its lines are not
		// copied (ParseOptions.Mapped).
		mapped = mapInput(f, 0)
	} else {
		if err := checkParseInput(in, c.File, c.Output); err != nil {
			return err
		}
		// Stdin redirected from a file is mapped too, from the offset the
		// shell left it at, and left at the file's end, as a read would.
		if f, ok := in.(*os.File); ok {
			if off, err := f.Seek(0, io.SeekCurrent); err == nil {
				if mapped = mapInput(f, off); mapped != nil {
					defer func() { _, _ = f.Seek(off+int64(len(mapped)), io.SeekStart) }()
				}
			}
		}
	}
	out, closeOut, err := outputTo(e, c.Output)
	if err != nil {
		return usageErrorf("parse: %v", err)
	}
	defer closeOut()
	widenPipe(out)
	if mapped == nil {
		// A flood piped in (cat capture | harness parse) is then read a
		// MiB at a time, as an agent's stdout is. The 200 MB corpora piped
		// in, medians of 7 to 9 interleaved runs (AMD EPYC VM), parse's
		// CPU in ms: codex 1895 -> 1844, cursor 1262 -> 1157, opencode
		// 1132 -> 982 (its context switches 9325 -> 2803).
		widenPipe(in)
	}
	// A reader of stdout that leaves (| head) must end the parse with its
	// status, not kill it: while SIGPIPE is caught, a write to a closed
	// pipe fails with EPIPE instead (os/signal), as it does for run.
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	pipeOwned.Store(true)
	defer signal.Stop(sigpipe)
	// Events are buffered and written out whenever the parse waits for
	// input (Flush), and at the end.
	w := bufio.NewWriterSize(out, parseWriteSize)
	if mapped != nil {
		// Events, and the result, may hold pieces of the mapped file until
		// the command returns: a fault reading one (the file was
		// shortened meanwhile) ends the parse here, with what was written.
		defer mapfile.Catching(mapped, func() {
			_ = w.Flush()
			err = withStatus(exitAgentFailed, fmt.Errorf("parse: %w", adapters.ErrMappedShrank))
		})()
	}
	var enc event.Appender
	// A failed write stops the reading: nobody would see the rest.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var writeErr error
	failed := func(err error) {
		if err != nil && writeErr == nil {
			writeErr = err
			stop()
		}
	}
	sink := func(ev event.Event) {
		if writeErr != nil {
			return
		}
		// Each line is encoded straight into w's buffer, which Write then
		// need not copy: an Encoder's line, copied into w, cost 170
		// instructions an event more (callgrind, claude text deltas).
		line, err := enc.Append(w.AvailableBuffer(), ev)
		if err == nil {
			_, err = w.Write(append(line, '\n'))
		}
		failed(err)
	}
	flush := func() {
		if writeErr == nil && w.Buffered() > 0 {
			failed(w.Flush())
		}
	}
	res, err := harness.Parse(ctx, in, c.Agent, sink, harness.ParseOptions{Raw: c.Raw, Flush: flush, Protocol: c.Protocol, Mapped: mapped, Resume: c.Resume})
	if ferr := w.Flush(); writeErr == nil {
		writeErr = ferr
	}
	switch {
	case res == nil && err != nil:
		// Parse sends nothing and returns no result only when it refuses
		// its arguments (an agent that does not speak --protocol): a
		// usage error, as run's is. A failed read still has a result.
		return withStatus(exitUsage, fmt.Errorf("parse: %w", err))
	case errors.Is(writeErr, syscall.EPIPE), errors.Is(writeErr, io.ErrClosedPipe):
		return withStatus(exitAgentFailed, nil) // the reader left; it can't be told
	case writeErr != nil:
		return withStatus(exitAgentFailed, fmt.Errorf("parse: writing: %w", writeErr))
	case err != nil:
		return withStatus(exitAgentFailed, fmt.Errorf("parse: %w", err))
	case res.Status != event.ResultSuccess:
		return withStatus(exitAgentFailed, nil)
	}
	return nil
}

// parseWriteSize is how much of the events parse writes at once: a
// quarter of its stdout pipe, widened to a MiB (widenPipe). At 64 KiB
// into a pipe of 64 KiB, each write filled the pipe, woke its reader and
// waited for it. 200 MB corpora read through a pipe as make bench reads
// them, medians of 11 interleaved runs (AMD EPYC VM), CPU in ms: claude
// 446 -> 439, codex 1552 -> 1449, cursor 981 -> 842, opencode 806 -> 771,
// gemini 1315 -> 1172; a codex parse switched context 9257 -> 3373 times.
// Widened with 64 KiB writes, or with 1 MiB writes, the CPU was no lower.
const parseWriteSize = 256 << 10

// widenPipe widens the pipe v is, if it is one (process.WidenPipe).
func widenPipe(v any) {
	if f, ok := v.(*os.File); ok {
		process.WidenPipe(f)
	}
}

// mapInput maps parse's input file from an offset on; a test's seam.
var mapInput = mapfile.MapFrom

// checkParseInput refuses, before -o is created, an input parse cannot
// read as one stream: a directory (given by name or as stdin), or the
// very file -o names, which creating -o would truncate before a line of
// it was read. file is the argument, "-" for stdin.
func checkParseInput(in io.Reader, file, output string) error {
	f, ok := in.(*os.File)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil {
		return nil // not a file to compare; reading it tells what is wrong
	}
	if st.IsDir() {
		if file == "-" {
			return usageErrorf("parse: stdin is a directory: give one captured stream (a .jsonl file)")
		}
		return usageErrorf("parse: %s is a directory: give one captured stream (a .jsonl file), or - for stdin", file)
	}
	if output == "" || !st.Mode().IsRegular() {
		return nil // only a regular file is emptied by opening it (/dev/null is not)
	}
	if ost, err := os.Stat(output); err == nil && os.SameFile(st, ost) {
		return usageErrorf("parse: -o %s is the file read: writing it would erase the stream before it is read", output)
	}
	return nil
}

// parseMemoryLimit is parse's memory limit while what it keeps is small.
const parseMemoryLimit = 32 << 20

// paceMemoryLimit keeps the memory limit 16 MiB above the heap the parse
// keeps alive (read every 50 ms), and at least at base, until stop is
// called. What a parse keeps grows with the stream (a hash per ended
// call, per counted model call): past the fixed limit the collector ran
// back to back (a million Claude tool calls: 5.2 s of CPU under it, 2.5 s
// without a limit). 16 MiB is about what the fixed limit leaves a short
// parse; half again what is kept (tried) cost a long codex stream 53 MB
// against 46 MB, for the same CPU.
func paceMemoryLimit(base int64) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(live)
			if live[0].Value.Kind() == metrics.KindUint64 {
				debug.SetMemoryLimit(paceLimit(base, int64(live[0].Value.Uint64())))
			}
		}
	}()
	return func() { close(done) }
}

// paceLimit is the memory limit for a parse keeping live bytes.
func paceLimit(base, live int64) int64 {
	return max(base, live+16<<20)
}
