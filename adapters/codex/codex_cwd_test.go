package codex

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/linescan"
)

// TestAppServerDiffsNameFilesFromTheCwd: an app-server file change's
// diff names its file from the session's directory, as the live run's
// (the disk's) diff does: from the task's cwd where the Client has one
// (a live session, and its reparse, begun with the meta's cwd; a capture
// with ReplayIn), else from the directory Codex's thread/start answer
// names (a capture mapped alone). A reparse named it by its absolute path
// (+++ b/tmp/…/first.txt), unlike the stream it reparsed.
func TestAppServerDiffsNameFilesFromTheCwd(t *testing.T) {
	t.Parallel()
	native, err := os.ReadFile(filepath.Join(appServerData, "converse.jsonl"))
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		client func() *Client
		header string
	}{
		// The capture's thread ran in /tmp/cxs/w1; a parent directory
		// tells the task's cwd from the thread's.
		"begun": {func() *Client {
			c := NewAppServer()
			c.Converse(false)
			require.NoError(t, c.Begin(io.Discard, adapters.Task{Cwd: "/tmp/cxs"}))
			for _, p := range []string{"first", "second"} { // the capture's two turns
				_, err := c.Prompt(p)
				require.NoError(t, err)
			}
			c.End()
			return c
		}, "+++ b/w1/first.txt\n"},
		"replay-in": {func() *Client {
			c := NewAppServer()
			c.ReplayIn("/tmp/cxs")
			return c
		}, "+++ b/w1/first.txt\n"},
		"capture-alone": {NewAppServer, "+++ b/first.txt\n"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := tc.client()
			var ends []*event.ToolEnd
			var start *event.SessionStart
			require.NoError(t, linescan.Scan(bytes.NewReader(native), 0, func(line []byte, _ int64) error {
				bodies, _ := c.Parse(nil, line)
				for _, b := range bodies {
					switch v := b.(type) {
					case *event.ToolEnd:
						ends = append(ends, v)
					case *event.SessionStart:
						start = v
					}
				}
				return nil
			}))
			require.NotNil(t, start)
			require.Equal(t, "/tmp/cxs/w1", start.Cwd, "the thread's directory, from thread/start's answer")
			require.NotEmpty(t, ends)
			require.Equal(t, []string{"/tmp/cxs/w1/first.txt"}, ends[0].Paths, "paths stay as Codex gave them")
			require.Equal(t, "--- /dev/null\n"+tc.header+"@@ -0,0 +1 @@\n+first\n", ends[0].Diff)
		})
	}
}

// TestExecDiffsNameFilesFromReplayIn: exec's lines name no directory; a
// reparse of a run's log gives the meta's (ReplayIn), and a diff Codex's
// change carries names its file from there, as the run's did.
func TestExecDiffsNameFilesFromReplayIn(t *testing.T) {
	t.Parallel()
	line := `{"type":"item.completed","item":{"id":"i","type":"file_change","changes":[{"path":"/w/sub/a.go","kind":"add","diff":"x\n"}],"status":"completed"}}`
	p := newParser()
	p.ReplayIn("/w")
	bodies, _ := p.Parse(nil, []byte(line))
	require.Equal(t, "--- /dev/null\n+++ b/sub/a.go\n@@ -0,0 +1 @@\n+x\n", bodies[1].(*event.ToolEnd).Diff)
	// The same file named relative to the run's directory: held to the
	// first diff as the headers name it, and found to contradict it (the
	// file holds x, not z). Keyed by the absolute path, the two were
	// different files, and the wrong diff went out as exact.
	update := `{"type":"item.completed","item":{"id":"j","type":"file_change","changes":[{"path":"sub/a.go","kind":"update","diff":"@@ -1 +1 @@\n-z\n+y\n"}],"status":"completed"}}`
	bodies, _ = adaptertest.ParseLines(p, update)
	te := bodies[1].(*event.ToolEnd)
	require.Empty(t, te.Diff)
	require.Equal(t, event.DiffSkippedUnknown, te.DiffSkipped)
}
