package acp

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// normalized is the unified stream of a captured session, held to the
// invariants.
func normalized(t *testing.T, file string) []event.Event {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	a, err := Custom("acp", []string{"acp"})
	require.NoError(t, err)
	out := adaptertest.Normalize(a, data, false)
	require.NoError(t, event.CheckNDJSON(out))
	adaptertest.CheckStream(t, out)
	evs, err := event.ReadAll(bytes.NewReader(out))
	require.NoError(t, err)
	return evs
}

func bodiesOf[T event.Body](evs []event.Event) []T {
	var out []T
	for _, ev := range evs {
		if b, ok := ev.Body.(T); ok {
			out = append(out, b)
		}
	}
	return out
}

func fatalOf(t *testing.T, evs []event.Event) *event.Error {
	t.Helper()
	var fatal []*event.Error
	for _, e := range bodiesOf[*event.Error](evs) {
		if e.Fatal {
			fatal = append(fatal, e)
		}
	}
	require.Len(t, fatal, 1)
	return fatal[0]
}

func resultOf(evs []event.Event) *event.Result { return evs[len(evs)-1].Body.(*event.Result) }

// TestExactOverACP holds real sessions of the pinned ACP adapters on the
// scripted model (captured with harness run --protocol acp --raw) to what
// the same runs say over the CLI transport (issue 23).
func TestExactOverACP(t *testing.T) {
	t.Run("claude-write-is-a-write-with-its-exact-diff", func(t *testing.T) {
		// claude-agent-acp 0.101: the tool_call has no input and no
		// location; _meta.claudeCode.toolResponse has Claude's own data.
		evs := normalized(t, "testdata/claude-edit.jsonl")
		start := bodiesOf[*event.ToolStart](evs)[0]
		require.Equal(t, event.KindWrite, start.Kind, "Write is a write over the CLI")
		end := bodiesOf[*event.ToolEnd](evs)[0]
		require.Equal(t, event.KindWrite, end.Kind)
		require.Equal(t, []string{"/tmp/acpw/cap/out.txt"}, end.Paths)
		require.Equal(t, "--- /dev/null\n+++ b/tmp/acpw/cap/out.txt\n@@ -0,0 +1 @@\n+hello-from-edit\n", end.Diff)
		require.Empty(t, end.DiffSkipped)
		u := resultOf(evs).Usage
		u.CostUSD = 0 // claude-agent-acp's own price, in usage_update
		require.Equal(t, event.Usage{InputTokens: 240, OutputTokens: 50}, u)
	})
	t.Run("codex-usage-and-auth-status", func(t *testing.T) {
		// codex-acp 2.6 runs on Codex's app-server and reports the turn's
		// usage; it also tells its login status (_auth/status_update).
		evs := normalized(t, "testdata/codex-tool.jsonl")
		res := resultOf(evs)
		require.Equal(t, event.Usage{InputTokens: 240, OutputTokens: 50}, res.Usage)
		require.Zero(t, res.Stats.UnparsedLines)
		end := bodiesOf[*event.ToolEnd](evs)[0]
		require.Equal(t, "hello-from-tool\n", end.Output, "the output codex-acp streams in _meta")
		require.Equal(t, 0, *end.ExitCode)
	})
	t.Run("codex-edit-names-its-file", func(t *testing.T) {
		// codex-acp 2.6 names the file only in its diff content.
		end := bodiesOf[*event.ToolEnd](normalized(t, "testdata/codex-edit.jsonl"))[0]
		require.Equal(t, []string{"/tmp/acpw/cap/out.txt"}, end.Paths)
	})
	t.Run("a-new-file-is-a-write-on-both-transports", func(t *testing.T) {
		// Codex's CLI adapter: an add is a write; Gemini's: write_file is.
		// OpenCode's: its write tool (opencode acp titles the call "write").
		for _, file := range []string{"testdata/codex-edit.jsonl", "testdata/gemini-edit.jsonl", "testdata/opencode-edit.jsonl"} {
			evs := normalized(t, file)
			require.Equal(t, event.KindWrite, bodiesOf[*event.ToolStart](evs)[0].Kind, file)
			require.Equal(t, event.KindWrite, bodiesOf[*event.ToolEnd](evs)[0].Kind, file)
		}
	})
	t.Run("claude-cancelled-mid-sentence", func(t *testing.T) {
		// claude-agent-acp 0.101 answers the prompt "cancelled" when the
		// idle budget's SIGTERM reaches it: what it said is cut off.
		evs := normalized(t, "testdata/exact/claude-hang.jsonl")
		res := resultOf(evs)
		require.NotEqual(t, event.ResultSuccess, res.Status)
		require.Empty(t, res.Text)
		require.Empty(t, bodiesOf[*event.Message](evs))
	})
	t.Run("claude-500", func(t *testing.T) {
		evs := normalized(t, "testdata/exact/claude-error.jsonl")
		_, res := requireServerError500(t, evs)
		require.Zero(t, res.Stats.UnparsedLines)
	})
	t.Run("codex-500", func(t *testing.T) {
		// codex-acp 2.6 ends a failed turn end_turn with the error as text,
		// after a systemError thread status.
		evs := normalized(t, "testdata/exact/codex-error.jsonl")
		e, _ := requireServerError500(t, evs)
		require.Contains(t, e.Message, "high demand")
		require.Empty(t, bodiesOf[*event.Message](evs))
	})
	t.Run("gemini-500", func(t *testing.T) {
		evs := normalized(t, "testdata/exact/gemini-error.jsonl")
		requireServerError500(t, evs) // Gemini's [MODE_UPDATE] answer to set_mode is no answer either
		require.Empty(t, bodiesOf[*event.TextDelta](evs))
	})
	t.Run("gemini-503", func(t *testing.T) {
		e := fatalOf(t, normalized(t, "testdata/exact/gemini-overloaded.jsonl"))
		require.Equal(t, event.ClassOverloaded, e.Class)
		require.Equal(t, 503, e.Status)
	})
	t.Run("gemini-usage-is-not-exact", func(t *testing.T) {
		// _meta.quota.token_count: input with the cache, output without
		// the thoughts, neither given: no usage rather than a wrong one.
		evs := normalized(t, "testdata/gemini-edit.jsonl")
		require.True(t, resultOf(evs).Usage.IsZero())
		require.Empty(t, bodiesOf[*event.Usage](evs))
		require.Equal(t, "DONE: file edited", resultOf(evs).Text)
		for _, d := range bodiesOf[*event.TextDelta](evs) {
			require.NotContains(t, d.Text, "MODE_UPDATE")
		}
	})
	t.Run("opencode-failed-shell", func(t *testing.T) {
		// opencode acp reports the failed command completed; its
		// rawOutput.metadata.exit says 2.
		end := bodiesOf[*event.ToolEnd](normalized(t, "testdata/exact/opencode-shfail.jsonl"))[0]
		require.Equal(t, event.StatusError, end.Status)
		require.NotNil(t, end.ExitCode)
		require.Equal(t, 2, *end.ExitCode)
	})
}

// requireServerError500 holds a run whose model answered HTTP 500 to one
// fatal server_error with the status, an error result and no answer (the
// error's message is the error event's, not the answer).
func requireServerError500(t *testing.T, evs []event.Event) (*event.Error, *event.Result) {
	t.Helper()
	e := fatalOf(t, evs)
	require.Equal(t, event.ClassServerError, e.Class)
	require.Equal(t, 500, e.Status)
	res := resultOf(evs)
	require.Equal(t, event.ResultError, res.Status)
	require.Empty(t, res.Text, "the error's message is the error event's, not the answer")
	return e, res
}

// TestReplayedDiffContradictingEarlierOneIsUnknown: a replayed session's
// diffs are the agent's own; Gemini's creation of out.txt shown twice
// (a second call, nothing between) cannot both be exact: the second
// becomes diff_skipped unknown, and the stream holds its invariants.
func TestReplayedDiffContradictingEarlierOneIsUnknown(t *testing.T) {
	data, err := os.ReadFile("testdata/gemini-edit.jsonl")
	require.NoError(t, err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	again := bytes.ReplaceAll(bytes.Join(lines[7:9], nil), []byte("write_file_1795469496809_0"), []byte("write_file_2"))
	file := filepath.Join(t.TempDir(), "twice.jsonl")
	require.NoError(t, os.WriteFile(file, slices.Concat(bytes.Join(lines[:9], nil), again, bytes.Join(lines[9:], nil)), 0o600))
	ends := bodiesOf[*event.ToolEnd](normalized(t, file))
	require.Len(t, ends, 2)
	require.Contains(t, ends[0].Diff, "+hello-from-edit\n")
	require.Empty(t, ends[1].Diff)
	require.Equal(t, event.DiffSkippedUnknown, ends[1].DiffSkipped)
}

// replayed is the stream of a captured run mapped in the run's
// directory cwd: as sessions reparse maps a full-access run's log
// (ReplayIn), or driven (Replay, Begin) as it maps a read-only run's and a
// live session's.
func replayed(t *testing.T, file, cwd string, driven bool) []event.Event {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	a, err := Custom("acp", []string{"acp"})
	require.NoError(t, err)
	c := a.NewParser().(*Client)
	if driven {
		c.Replay()
		c.BoundSetup(time.Hour, nil)
		require.NoError(t, c.Begin(io.Discard, adapters.Task{Cwd: cwd}))
	} else {
		c.ReplayIn(cwd)
	}
	var out bytes.Buffer
	s := adaptertest.Stream(a, false, &out)
	require.NoError(t, adapters.Normalize(bytes.NewReader(data), c, s, adapters.NormalizeOptions{}))
	s.Finish(event.Outcome{NoProcess: true})
	adaptertest.CheckStream(t, out.Bytes())
	evs, err := event.ReadAll(&out)
	require.NoError(t, err)
	return evs
}

// TestReplayedRunNamesFilesFromItsDirectory: a run's capture mapped in
// its directory names the files of its diffs from there, as the live
// run's diffs do, Claude's own (_meta.claudeCode) too: a full-access
// run's were named by their absolute path, and claude-agent-acp's also
// when driven.
func TestReplayedRunNamesFilesFromItsDirectory(t *testing.T) {
	for _, driven := range []bool{false, true} {
		for _, file := range []string{"testdata/claude-edit.jsonl", "testdata/codex-edit.jsonl", "testdata/gemini-edit.jsonl"} {
			ends := bodiesOf[*event.ToolEnd](replayed(t, file, "/tmp/acpw/cap", driven))
			require.NotEmpty(t, ends, file)
			require.Equal(t, "--- /dev/null\n+++ b/out.txt\n@@ -0,0 +1 @@\n+hello-from-edit\n", ends[0].Diff, "%s driven=%v", file, driven)
			require.Equal(t, []string{"/tmp/acpw/cap/out.txt"}, ends[0].Paths, file)
		}
		// Outside the directory: the absolute path, as a live run names it.
		end := bodiesOf[*event.ToolEnd](replayed(t, "testdata/claude-edit.jsonl", "/elsewhere", driven))[0]
		require.Equal(t, "--- /dev/null\n+++ b/tmp/acpw/cap/out.txt\n@@ -0,0 +1 @@\n+hello-from-edit\n", end.Diff)
	}
}

// TestCapturedWriteWithoutDiffIsUnknown: a file call that ends well with
// no diff content (opencode acp's write) cannot be shown from a capture:
// diff_skipped unknown, as the live run says of it, not a call that
// seems to have changed nothing.
func TestCapturedWriteWithoutDiffIsUnknown(t *testing.T) {
	for _, evs := range [][]event.Event{normalized(t, "testdata/opencode-edit.jsonl"),
		replayed(t, "testdata/opencode-edit.jsonl", "/tmp/acpw/cap", false), replayed(t, "testdata/opencode-edit.jsonl", "/tmp/acpw/cap", true)} {
		end := bodiesOf[*event.ToolEnd](evs)[0]
		require.Equal(t, event.KindWrite, end.Kind)
		require.Equal(t, event.StatusOK, end.Status)
		require.Empty(t, end.Diff)
		require.Equal(t, event.DiffSkippedUnknown, end.DiffSkipped)
	}
}
