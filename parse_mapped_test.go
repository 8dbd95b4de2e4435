package harness_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/mapfile"
)

// TestParseMappedIsParseRead: every capture parses to the same events,
// byte for byte, from its file mapped (harness parse's way: the lines are
// views of the mapping, which the parsers keep pieces of) as read through
// a reader, with and without the native lines.
func TestParseMappedIsParseRead(t *testing.T) {
	t.Parallel()
	captures, err := filepath.Glob("testdata/*/*.jsonl")
	require.NoError(t, err)
	require.NotEmpty(t, captures)
	for _, capture := range captures {
		agent := filepath.Base(filepath.Dir(capture))
		for _, raw := range []bool{false, true} {
			read := parseTo(t, capture, agent, raw, false)
			mapped := parseTo(t, capture, agent, raw, true)
			require.Equal(t, read, mapped, "%s (raw %v)", capture, raw)
		}
	}
}

func parseTo(t *testing.T, capture, agent string, raw, mapped bool) string {
	t.Helper()
	data, err := os.ReadFile(capture)
	require.NoError(t, err)
	o := harness.ParseOptions{Raw: raw, Run: "run_x", Now: func() time.Time { return time.UnixMilli(1) }}
	var in *os.File
	if mapped {
		in, err = os.Open(capture)
		require.NoError(t, err)
		defer in.Close()
		o.Mapped = mapfile.Map(in)
		require.NotNil(t, o.Mapped)
	}
	var out bytes.Buffer
	sink := func(ev event.Event) {
		line, err := event.AppendJSON(nil, ev)
		require.NoError(t, err)
		out.Write(line)
		out.WriteByte('\n')
	}
	var res *event.Result
	if mapped {
		res, _ = harness.Parse(context.Background(), in, agent, sink, o)
	} else {
		res, _ = harness.Parse(context.Background(), bytes.NewReader(data), agent, sink, o)
	}
	require.NotNil(t, res)
	return out.String()
}

// TestParseMappedFileShortened: a file cut short after it was mapped ends
// the parse with a read error, as a failed read does, not a crash.
func TestParseMappedFileShortened(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "codex.jsonl")
	line := `{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"` + strings.Repeat("x", 4000) + `"}}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat(line, 64)), 0o600))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	mapped := mapfile.Map(f)
	require.NotNil(t, mapped)
	require.NoError(t, os.Truncate(path, 0))
	var events []event.Event
	res, err := harness.Parse(context.Background(), f, "codex", func(ev event.Event) { events = append(events, ev) }, harness.ParseOptions{Mapped: mapped})
	require.Error(t, err)
	require.Contains(t, err.Error(), "shortened")
	require.Equal(t, event.ResultError, res.Status)
	require.Equal(t, event.TypeResult, events[len(events)-1].Type)
}

// TestParseMappedFaultReachesTheCaller: a piece of a mapped file that the
// file lost after the reader was past it faults where the caller's sink
// reads it: a panic the caller recovers (harness parse does), with
// SetPanicOnFault, not the end of the program.
func TestParseMappedFaultReachesTheCaller(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "codex.jsonl")
	var lines strings.Builder
	for range 64 {
		lines.WriteString(`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"` + strings.Repeat("x", 8000) + `"}}` + "\n")
	}
	require.NoError(t, os.WriteFile(path, []byte(lines.String()), 0o600))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	mapped := mapfile.Map(f)
	require.NotNil(t, mapped)
	var v any
	var parseErr error
	func() {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() { v = recover() }()
		cut := false
		_, parseErr = harness.Parse(context.Background(), f, "codex", func(ev event.Event) {
			if !cut {
				// The reader is far ahead (or done): the events to come
				// hold pieces of pages the file no longer has.
				require.NoError(t, os.Truncate(path, 0))
				cut = true
			}
			if _, err := event.AppendJSON(nil, ev); err != nil {
				panic(err)
			}
		}, harness.ParseOptions{Mapped: mapped})
	}()
	if v == nil {
		// The reader met the lost part first, and its lines held no text.
		require.ErrorContains(t, parseErr, "shortened", "parse ended without a fault")
		return
	}
	require.True(t, mapfile.IsFault(v, mapped), "%v", v)
}
