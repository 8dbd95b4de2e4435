package event

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkBodies wraps bodies in a valid envelope, between a session_start and
// the result, and checks the stream; the tool calls are opened for them.
func checkBodies(result *Result, bodies ...Body) error {
	evs := []Event{{Body: &SessionStart{Agent: "a", Argv: []string{}}}}
	tools := int64(0)
	for _, b := range bodies {
		if end, ok := b.(*ToolEnd); ok {
			tools++
			evs = append(evs, Event{Body: &ToolStart{CallID: end.CallID, Name: end.Name, Kind: end.Kind, Input: json.RawMessage("{}")}})
		}
		evs = append(evs, Event{Body: b})
	}
	evs = append(evs, Event{Body: result})
	for i := range evs {
		evs[i].V, evs[i].Run, evs[i].Seq, evs[i].TS, evs[i].Type = Version, testRun, int64(i+1), 1, evs[i].Body.EventType()
	}
	result.Stats.Events, result.Stats.ToolCalls = int64(len(evs)), tools
	return Check(evs)
}

func TestCheckUsageAddsUp(t *testing.T) {
	t.Parallel()
	calls := []Body{&Usage{InputTokens: 100, OutputTokens: 7, CacheReadTokens: 50, CostUSD: 0.1}, &Usage{InputTokens: 20, OutputTokens: 300, ReasoningTokens: 10, CacheWriteTokens: 5}}
	total := Usage{InputTokens: 120, OutputTokens: 307, CacheReadTokens: 50, CacheWriteTokens: 5, ReasoningTokens: 10}
	require.NoError(t, checkBodies(&Result{Status: ResultSuccess, Usage: total}, calls...))
	require.NoError(t, checkBodies(&Result{Status: ResultSuccess}), "no usage reported at all")
	withCost := total
	withCost.CostUSD = 9 // the agent's own price: costs are not summed
	require.NoError(t, checkBodies(&Result{Status: ResultSuccess, Usage: withCost}, calls...))
	for name, u := range map[string]Usage{
		"input":       {InputTokens: 121, OutputTokens: 307, CacheReadTokens: 50, CacheWriteTokens: 5, ReasoningTokens: 10},
		"output":      {InputTokens: 120, OutputTokens: 3, CacheReadTokens: 50, CacheWriteTokens: 5, ReasoningTokens: 10},
		"cache-read":  {InputTokens: 120, OutputTokens: 307, CacheWriteTokens: 5, ReasoningTokens: 10},
		"cache-write": {InputTokens: 120, OutputTokens: 307, CacheReadTokens: 50, ReasoningTokens: 10},
		"reasoning":   {InputTokens: 120, OutputTokens: 307, CacheReadTokens: 50, CacheWriteTokens: 5},
	} {
		require.Error(t, checkBodies(&Result{Status: ResultSuccess, Usage: u}, calls...), name)
	}
	require.Error(t, checkBodies(&Result{Status: ResultSuccess, Usage: total}), "totals without usage events")
}

func edit(id string, kind Kind, diff string) *ToolEnd {
	return &ToolEnd{CallID: id, Name: "Edit", Kind: kind, Status: StatusOK, Diff: diff}
}

func TestCheckDiffsApply(t *testing.T) {
	t.Parallel()
	ok := &Result{Status: ResultSuccess}
	create := edit("w", KindWrite, "--- /dev/null\n+++ b/f.txt\n@@ -0,0 +1,3 @@\n+one\n+two\n+three\n")
	good := edit("e", KindEdit, "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n")
	cases := map[string]struct {
		bodies []Body
		fails  bool
	}{
		"create-then-edit": {[]Body{create, good}, false},
		// Claude's old Edit diffs: built from the strings, at line 1.
		"edit-at-wrong-line":             {[]Body{create, edit("e", KindEdit, "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-two\n+TWO\n")}, true},
		"false-no-newline":               {[]Body{create, edit("e", KindEdit, "--- a/f.txt\n+++ b/f.txt\n@@ -3 +3 @@\n-three\n\\ No newline at end of file\n+THREE\n")}, true},
		"edit-unknown-base":              {[]Body{good}, false},
		"unknown-base-self-inconsistent": {[]Body{edit("e", KindEdit, "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n")}, true},
		"unknown-base-learned":           {[]Body{good, edit("e2", KindEdit, "--- a/f.txt\n+++ b/f.txt\n@@ -2 +2 @@\n-two\n+2\n")}, true},
		"unknown-base-consistent":        {[]Body{good, edit("e2", KindEdit, "--- a/f.txt\n+++ b/f.txt\n@@ -2 +2 @@\n-TWO\n+2\n")}, false},
		"created-twice":                  {[]Body{create, edit("w2", KindWrite, "--- /dev/null\n+++ b/f.txt\n@@ -0,0 +1 @@\n+x\n")}, true},
		"edit-after-remove":              {[]Body{create, edit("d", KindDelete, "--- a/f.txt\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-one\n-two\n-three\n"), good}, true},
		// A shell command may have changed the file: the next diff is held to itself only.
		"shell-between": {[]Body{create, &ToolEnd{CallID: "s", Name: "Bash", Kind: KindShell, Status: StatusOK},
			edit("e", KindEdit, "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-ONE\n+one\n")}, false},
		"file-tool-without-diff-between": {[]Body{create, edit("x", KindEdit, ""),
			edit("e", KindEdit, "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-ONE\n+one\n")}, false},
		"read-between": {[]Body{create, &ToolEnd{CallID: "r", Name: "Read", Kind: KindRead, Status: StatusOK},
			edit("e", KindEdit, "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-ONE\n+one\n")}, true},
		"not-a-diff":              {[]Body{edit("e", KindEdit, "replaced two with TWO")}, true},
		"diff-and-skipped":        {[]Body{&ToolEnd{CallID: "e", Name: "Edit", Kind: KindEdit, Status: StatusOK, Diff: good.Diff, DiffSkipped: DiffSkippedBinary}}, true},
		"unknown-skip-reason":     {[]Body{&ToolEnd{CallID: "e", Name: "Edit", Kind: KindEdit, Status: StatusOK, DiffSkipped: "lazy"}}, true},
		"skipped-too-large":       {[]Body{&ToolEnd{CallID: "e", Name: "Edit", Kind: KindEdit, Status: StatusOK, DiffSkipped: DiffSkippedTooLarge}}, false},
		"truncated-diff-not-held": {[]Body{&ToolEnd{CallID: "e", Name: "Edit", Kind: KindEdit, Status: StatusOK, Diff: "--- a/f\n+++ b/f\n@@ -1,9 +1,9 @@\n a\n", DiffTruncated: true}}, false},
		"two-files": {[]Body{create, edit("m", KindEdit, "--- a/f.txt\n+++ b/f.txt\n@@ -3 +3 @@\n-three\n+3\n--- /dev/null\n+++ b/g.txt\n@@ -0,0 +1 @@\n+g\n"),
			edit("e", KindEdit, "--- a/g.txt\n+++ b/g.txt\n@@ -1 +1 @@\n-g\n+G\n")}, false},
	}
	for name, tc := range cases {
		err := checkBodies(ok, tc.bodies...)
		if tc.fails {
			require.Error(t, err, name)
		} else {
			require.NoError(t, err, name)
		}
	}
}

// FuzzCheckReplaysDiffs: whatever the diffs of a stream, Check answers
// without panicking, and a diff it accepts on a fresh stream parses.
func FuzzCheckReplaysDiffs(f *testing.F) {
	f.Add("--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n", "--- a/f\n+++ b/f\n@@ -2 +2 @@\n-b\n+c\n")
	f.Add("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n x\n-y\n+z\n w\n", "--- a/f\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-x\n-z\n-w\n")
	f.Add("Index: f\n===\n--- a/f\n+++ b/f\n@@ -5,0 +6 @@\n+n\n\\ No newline at end of file\n", "x")
	f.Fuzz(func(t *testing.T, first, second string) {
		err := checkBodies(&Result{Status: ResultSuccess}, edit("a", KindEdit, first), edit("b", KindWrite, second))
		if err == nil && first != "" {
			_, perr := ParsePatch(first)
			require.NoError(t, perr)
		}
	})
}

// TestDiffReplayLimit: past its Limit, a DiffReplay refuses the diff and
// forgets everything, so that a later diff is held only to itself.
func TestDiffReplayLimit(t *testing.T) {
	edit := func(diff string) *ToolEnd { return &ToolEnd{Kind: KindEdit, Diff: diff} }
	first := "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"
	contradicting := "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n+y\n"

	var unlimited DiffReplay
	require.NoError(t, unlimited.Apply(edit(first)))
	require.ErrorContains(t, unlimited.Apply(edit(contradicting)), `line 1 was "b\n"`)

	r := DiffReplay{Limit: len(first) + 10}
	require.NoError(t, r.Apply(edit(first)))
	require.ErrorContains(t, r.Apply(edit(first)), "more than")
	require.NoError(t, r.Apply(edit(contradicting)), "everything was forgotten")
	require.NoError(t, r.Apply(&ToolEnd{Kind: KindShell}))
	require.NoError(t, r.Apply(edit(first)), "a shell command made it forget, and the count start again")
}
