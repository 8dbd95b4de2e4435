package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
)

type parseCmd struct {
	Agent  string `short:"a" required:"" help:"Agent that produced the stream (claude, codex, cursor, opencode, gemini, or an alias)."`
	Raw    bool   `help:"Also emit each native line as a native event, before the events derived from it."`
	Output string `short:"o" help:"Write the stream to this file instead of stdout." type:"path"`
	File   string `arg:"" optional:"" default:"-" help:"Native stream to read; - or nothing for stdin."`
}

// Run normalizes the stream. Exit status: 0 when the agent's stream ends in
// success, 1 when it reports an error or ends without its terminal event,
// 2 for an unknown agent or an unreadable file.
func (c *parseCmd) Run(e *env) error {
	if _, err := harness.Adapter(c.Agent); err != nil {
		return withStatus(exitUsage, err)
	}
	in := e.Stdin
	if c.File != "-" {
		f, err := os.Open(c.File)
		if err != nil {
			return usageErrorf("parse: %v", err)
		}
		defer f.Close()
		in = f
	}
	out := e.Stdout
	if c.Output != "" {
		f, err := os.Create(c.Output)
		if err != nil {
			return usageErrorf("parse: %v", err)
		}
		defer f.Close()
		out = f
	}
	// Lines go out whole, one Write each, as soon as they exist.
	w := bufio.NewWriterSize(out, 64<<10)
	enc := event.NewEncoder(w)
	var writeErr error
	sink := func(ev event.Event) {
		if writeErr == nil {
			writeErr = enc.Encode(ev)
		}
	}
	// Flush whenever more input is needed: a live pipe sees each event as
	// soon as its line is read, a file is written in large blocks.
	in = flushBeforeRead{in, w}
	res, err := harness.Parse(context.Background(), in, c.Agent, sink, harness.ParseOptions{Raw: c.Raw})
	if ferr := w.Flush(); writeErr == nil {
		writeErr = ferr
	}
	switch {
	case writeErr != nil && !errors.Is(writeErr, io.ErrClosedPipe):
		return withStatus(exitAgentFailed, fmt.Errorf("parse: writing: %w", writeErr))
	case err != nil:
		return withStatus(exitAgentFailed, fmt.Errorf("parse: %w", err))
	case res.Status != event.ResultSuccess:
		return withStatus(exitAgentFailed, nil)
	}
	return nil
}

type flushBeforeRead struct {
	r io.Reader
	w *bufio.Writer
}

func (f flushBeforeRead) Read(p []byte) (int, error) {
	if f.w.Buffered() > 0 {
		if err := f.w.Flush(); err != nil {
			return 0, err
		}
	}
	return f.r.Read(p)
}
