package gemini

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

const testdata = "../../testdata/gemini"

func TestGolden(t *testing.T) {
	t.Parallel()
	adaptertest.Golden(t, Agent, testdata, event.TypeSessionStart, event.TypeTextDelta, event.TypeMessage,
		event.TypeToolStart, event.TypeToolEnd, event.TypeUsage, event.TypeWarning, event.TypeError, event.TypeResult)
}

func TestCommand(t *testing.T) {
	t.Parallel()
	adaptertest.Commands(t, Agent, "gemini", []adaptertest.CommandCase{
		{Name: "default-full-access", Task: adapters.Task{Prompt: "hi"},
			Argv: []string{"gemini", "--output-format", "stream-json", "--approval-mode=yolo", "--skip-trust", "--prompt=hi"}},
		{Name: "read-only-model", Task: adapters.Task{Prompt: "hi", Model: "gemini-2.5-pro", Permissions: adapters.ReadOnly, Cwd: "/w"},
			Argv: []string{"gemini", "--output-format", "stream-json", "--model=gemini-2.5-pro", "--approval-mode=plan", "--skip-trust", "--prompt=hi"}},
		{Name: "resume-and-extra", Task: adapters.Task{Prompt: "more", Resume: "0677a893", ExtraArgs: []string{"--debug"}, NoPartial: true},
			Argv: []string{"gemini", "--output-format", "stream-json", "--approval-mode=yolo", "--skip-trust", "--resume=0677a893", "--debug", "--prompt=more"}},
		{Name: "prompt-starting-with-dash", Task: adapters.Task{Prompt: "-p --yolo"},
			Argv: []string{"gemini", "--output-format", "stream-json", "--approval-mode=yolo", "--skip-trust", "--prompt=-p --yolo"}},
	})
}

func delta(s string) string {
	return `{"type":"message","role":"assistant","content":"` + s + `","delta":true}`
}

// deltaAt is delta with a timestamp at clock (15:04:05.000) on one day.
func deltaAt(s, clock string) string {
	return `{"type":"message","timestamp":"2026-11-21T` + clock + `Z","role":"assistant","content":"` + s + `","delta":true}`
}

// texts returns the text of each delta, message and warning, tagged.
func texts(bodies []event.Body) []string {
	var out []string
	for _, b := range bodies {
		switch v := b.(type) {
		case *event.TextDelta:
			out = append(out, "d:"+v.Text)
		case *event.Message:
			out = append(out, "m:"+v.Text)
		case *event.Warning:
			out = append(out, "w:"+v.Code)
		}
	}
	return out
}

func TestParseDeltas(t *testing.T) {
	t.Parallel()
	const result = `{"type":"result","status":"success"}`
	for name, tc := range map[string]struct {
		lines []string
		want  []string
	}{
		"run-ends-at-tool": {
			[]string{delta("a"), delta("b"), `{"type":"tool_use","tool_name":"glob","tool_id":"g1","parameters":{"pattern":"*"}}`},
			[]string{"d:a", "d:b", "m:ab"}},
		"run-ends-at-result": {[]string{delta("a"), delta("b"), result}, []string{"d:a", "d:b", "m:ab"}},
		// Text the output ended in was never completed: deltas only.
		"run-ends-at-flush": {[]string{delta("a"), delta("b")}, []string{"d:a", "d:b"}},
		"non-delta-message": {[]string{delta("a"), `{"type":"message","role":"assistant","content":"whole"}`},
			[]string{"d:a", "m:a", "m:whole"}},
		"retry-replays-whole-attempt": {[]string{delta("x"), delta("y"), delta("x"), delta("y"), delta("x"), delta("y"), delta("z"), result},
			[]string{"d:x", "d:y", "w:agent_retry", "d:z", "m:xyz"}},
		"retry-cut-short": {[]string{delta("x"), delta("y"), delta("x"), result}, []string{"d:x", "d:y", "w:agent_retry", "m:xy"}},
		"repeat-that-is-real-text": {[]string{delta("a"), delta("b"), delta("a"), delta("c"), result},
			[]string{"d:a", "d:b", "d:a", "d:c", "m:abac"}},
		"single-chunk-replayed": {[]string{delta("x"), delta("x"), result}, []string{"d:x", "w:agent_retry", "m:x"}},
		// A chunk that repeats the first one within a burst is the model's
		// text: a retry comes a second or more after the failed attempt.
		"repeat-in-a-burst-is-text": {[]string{deltaAt("**", "10:00:00.100"), deltaAt("Note", "10:00:00.110"), deltaAt("**", "10:00:00.120"), result},
			[]string{"d:**", "d:Note", "d:**", "m:**Note**"}},
		"whole-message-repeated-in-a-burst": {[]string{deltaAt("ha", "10:00:00.100"), deltaAt("ha", "10:00:00.150"), result},
			[]string{"d:ha", "d:ha", "m:haha"}},
		"retry-after-a-gap": {[]string{deltaAt("x", "10:00:00.100"), deltaAt("y", "10:00:00.110"), deltaAt("x", "10:00:01.500"), deltaAt("y", "10:00:01.510"), deltaAt("z", "10:00:01.520"), result},
			[]string{"d:x", "d:y", "w:agent_retry", "d:z", "m:xyz"}},
		"second-retry-after-a-gap": {[]string{deltaAt("x", "10:00:00.100"), deltaAt("x", "10:00:02.000"), deltaAt("x", "10:00:02.010"), result},
			[]string{"d:x", "w:agent_retry", "d:x", "m:xx"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, texts(adaptertest.Bodies(newParser(), tc.lines...)))
		})
	}
}

func TestParseTools(t *testing.T) {
	t.Parallel()
	bodies := adaptertest.Bodies(newParser(), `{"type":"tool_use","tool_name":"replace","tool_id":"r1","parameters":{"file_path":"/w/a.go","old_string":"x\n","new_string":"y\n"}}`,
		`{"type":"tool_result","tool_id":"r1","status":"success","output":"ok"}`,
		`{"type":"tool_use","tool_name":"run_shell_command","tool_id":"s1","parameters":{"command":"false"}}`,
		`{"type":"tool_result","tool_id":"s1","status":"success","output":"Command: false\nExit Code: 1"}`,
		`{"type":"tool_use","tool_name":"mcp_github_create_issue","tool_id":"m1","parameters":{}}`,
		`{"type":"tool_result","tool_id":"m1","status":"error","error":{"type":"mcp_tool_error","message":"boom"}}`,
		`{"type":"tool_result","tool_id":"unknown","status":"success","output":"late"}`)
	require.Len(t, bodies, 7)
	start := bodies[0].(*event.ToolStart)
	require.Equal(t, event.KindEdit, start.Kind)
	require.Equal(t, "/w/a.go", start.Path)
	end := bodies[1].(*event.ToolEnd)
	require.Equal(t, []string{"/w/a.go"}, end.Paths)
	require.Empty(t, end.Diff, "the file's content is unknown: no diff from old_string alone")
	require.Equal(t, event.DiffSkippedUnknown, end.DiffSkipped)
	require.Equal(t, "false", bodies[2].(*event.ToolStart).Command)
	end = bodies[3].(*event.ToolEnd)
	require.Equal(t, event.StatusError, end.Status, "a non-zero exit is an error")
	require.Equal(t, event.Int(1), end.ExitCode)
	require.Equal(t, event.KindMCP, bodies[4].(*event.ToolStart).Kind)
	end = bodies[5].(*event.ToolEnd)
	require.Equal(t, event.StatusError, end.Status)
	require.Equal(t, "boom", end.Output)
	end = bodies[6].(*event.ToolEnd)
	require.Equal(t, "unknown", end.CallID, "an unmatched result is still reported; the stream pairs it")
}

// TestRepeatedToolResult: a tool_result for a call that already ended is
// the same result twice (dropped, as Claude's parser drops it), not a
// second call with no input.
func TestRepeatedToolResult(t *testing.T) {
	t.Parallel()
	use := `{"type":"tool_use","tool_name":"run_shell_command","tool_id":"s1","parameters":{"command":"true"}}`
	res := `{"type":"tool_result","tool_id":"s1","status":"success","output":"ok"}`
	orphan := `{"type":"tool_result","tool_id":"o1","status":"success","output":"late"}`
	bodies := adaptertest.Bodies(newParser(), use, res, res, delta("a"), res, delta("b"), orphan, orphan,
		`{"type":"result","status":"success"}`)
	var kinds []string
	for _, b := range bodies {
		switch v := b.(type) {
		case *event.ToolStart:
			kinds = append(kinds, "start:"+v.CallID)
		case *event.ToolEnd:
			kinds = append(kinds, "end:"+v.CallID)
		case *event.Message:
			kinds = append(kinds, "m:"+v.Text)
		}
	}
	require.Equal(t, []string{"start:s1", "end:s1", "m:ab", "end:o1"}, kinds,
		"one end per call, an unmatched one's too; a repeat does not cut the text in two")

	// A tool_use that announces the id again is a new call, which ends.
	bodies = adaptertest.Bodies(newParser(), use, res, use, res, res)
	require.Len(t, bodies, 4)
	require.IsType(t, &event.ToolEnd{}, bodies[3])
}

// TestRecentIDs: the ended ids are the last 64, in a fixed table.
func TestRecentIDs(t *testing.T) {
	t.Parallel()
	r := newParser().ended
	require.False(t, r.has("a"))
	for i := range 64 {
		r.add(strconv.Itoa(i))
	}
	require.True(t, r.has("0"))
	require.True(t, r.has("63"))
	require.False(t, r.has("64"))
	r.add("64")
	require.False(t, r.has("0"), "the oldest is forgotten")
	require.True(t, r.has("1"))
	require.True(t, r.has("64"))
}

func TestParseResult(t *testing.T) {
	t.Parallel()
	bodies := adaptertest.Bodies(newParser(), `{"type":"init","session_id":"s1","model":"m"}`,
		delta("hi"),
		`{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: {\"error\":{\"code\":429,\"message\":\"quota\"}}]"},"stats":{"total_tokens":34,"input_tokens":20,"output_tokens":10,"cached":5,"input":15,"duration_ms":7}}`)
	require.Equal(t, &event.SessionStart{SessionID: "s1", Model: "m"}, bodies[0])
	e := bodies[3].(*event.Error)
	require.Equal(t, event.ClassRateLimit, e.Class)
	require.Equal(t, 429, e.Status)
	require.True(t, e.Fatal, "the error that ends the run is fatal")
	require.NotNil(t, e.Partial)
	// 34 total - 20 prompt - 10 candidates = 4 thought tokens, which the
	// spec's output includes.
	u := event.Usage{InputTokens: 15, CacheReadTokens: 5, OutputTokens: 14, ReasoningTokens: 4}
	require.Equal(t, &u, bodies[4])
	require.Equal(t, &event.Result{Status: event.ResultError, Text: "hi", SessionID: "s1", DurationMS: 7, DurationNative: true, Usage: u}, bodies[5])
}

func TestParseErrorClasses(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		code  string
		class string
	}{
		"500": {"500", event.ClassServerError},
		"502": {"502", event.ClassServerError},
		"503": {"503", event.ClassOverloaded},
		"529": {"529", event.ClassOverloaded},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bodies := adaptertest.Bodies(newParser(), `{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: {\"error\":{\"code\":`+tc.code+`,\"message\":\"x\"}}]"}}`)
			e := bodies[0].(*event.Error)
			require.Equal(t, tc.class, e.Class)
			require.Equal(t, tc.code, strconv.Itoa(e.Status))
			require.True(t, e.Fatal)
			require.Empty(t, bodies[1].(*event.Result).Text, "no error message as the answer")
		})
	}
	// An error line is not the end of the run.
	e := adaptertest.Bodies(newParser(), `{"type":"error","severity":"error","message":"loop detected"}`)[0].(*event.Error)
	require.False(t, e.Fatal)
}

func TestParseDurations(t *testing.T) {
	t.Parallel()
	lines := []string{
		`{"type":"init","timestamp":"2026-11-21T05:20:36.956Z","session_id":"s"}`,
		`{"type":"tool_use","timestamp":"2026-11-21T05:20:37.036Z","tool_name":"glob","tool_id":"g1","parameters":{}}`,
		`{"type":"tool_result","timestamp":"2026-11-21T05:20:37.119Z","tool_id":"g1","status":"success","output":""}`,
		`{"type":"result","timestamp":"2026-11-21T05:20:37.195Z","status":"success"}`,
	}
	bodies := adaptertest.Bodies(newParser(), lines...)
	require.Equal(t, int64(83), bodies[2].(*event.ToolEnd).DurationMS, "from the native timestamps")
	require.Equal(t, int64(239), bodies[3].(*event.Result).DurationMS, "init to result when stats has none")
	for stats, want := range map[string]int64{
		`{"duration_ms":0}`:   0, // Gemini's own, 0 included
		`{"duration_ms":120}`: 120,
		`{"duration_ms":-5}`:  239, // negative: as if missing
		`{"duration_ms":"7"}`: 239, // not a number
		`{}`:                  239,
	} {
		r := adaptertest.Bodies(newParser(), lines[0], strings.Replace(lines[3], `}`, `,"stats":`+stats+`}`, 1))[1].(*event.Result)
		require.Equal(t, want, r.DurationMS, stats)
		require.True(t, r.DurationNative, stats)
	}
	// Without an init to measure from, a negative one is left to the
	// stream (the span of the lines' timestamps), not kept.
	r := adaptertest.Bodies(newParser(), `{"type":"result","status":"success","stats":{"duration_ms":-5}}`)[0].(*event.Result)
	require.Zero(t, r.DurationMS)
	require.False(t, r.DurationNative)

	// A live run measures durations itself.
	p := newParser()
	p.UseWallClock()
	bodies, _ = adaptertest.ParseLines(p, lines...)
	require.Zero(t, bodies[2].(*event.ToolEnd).DurationMS)
	require.Zero(t, bodies[3].(*event.Result).DurationMS)
}

func TestParseWriteThenReplace(t *testing.T) {
	t.Parallel()
	write := `{"type":"tool_use","tool_name":"write_file","tool_id":"w","parameters":{"file_path":"/w/a.txt","content":"x\nx\n"}}`
	created := `{"type":"tool_result","tool_id":"w","status":"success","output":"Successfully created and wrote to new file: /w/a.txt."}`
	replace := func(id, params string) string {
		return `{"type":"tool_use","tool_name":"replace","tool_id":"` + id + `","parameters":{"file_path":"/w/a.txt",` + params + `}}`
	}
	modified := func(id string) string {
		return `{"type":"tool_result","tool_id":"` + id + `","status":"success","output":"Successfully modified file: /w/a.txt (2 replacements)."}`
	}
	for name, tc := range map[string]struct {
		lines []string
		diff  string
	}{
		"all-occurrences": {[]string{write, created, replace("r", `"old_string":"x","new_string":"y","allow_multiple":true`), modified("r")},
			"--- a/w/a.txt\n+++ b/w/a.txt\n@@ -1,2 +1,2 @@\n-x\n-x\n+y\n+y\n"},
		"ambiguous-without-allow-multiple": {[]string{write, created, replace("r", `"old_string":"x","new_string":"y"`), modified("r")}, ""},
		"after-a-shell-command": {[]string{write, created,
			`{"type":"tool_use","tool_name":"run_shell_command","tool_id":"s","parameters":{"command":"sed -i s/x/z/ /w/a.txt"}}`,
			`{"type":"tool_result","tool_id":"s","status":"success","output":""}`,
			replace("r", `"old_string":"x","new_string":"y","allow_multiple":true`), modified("r")}, ""},
		"over-escaped-content": {[]string{strings.Replace(write, `x\nx\n`, `x\\nx`, 1), created}, ""},
		// A tab in the name: no header can name the file (adapters.HeaderName).
		"a-file-no-header-can-name": {[]string{strings.ReplaceAll(write, "a.txt", `a\tb.txt`), strings.ReplaceAll(created, "a.txt", `a\tb.txt`),
			strings.ReplaceAll(replace("r", `"old_string":"x","new_string":"y","allow_multiple":true`), "a.txt", `a\tb.txt`),
			strings.ReplaceAll(modified("r"), "a.txt", `a\tb.txt`)}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var last *event.ToolEnd
			for _, b := range adaptertest.Bodies(newParser(), tc.lines...) {
				if te, ok := b.(*event.ToolEnd); ok {
					last = te
				}
			}
			require.Equal(t, strings.ReplaceAll(tc.diff, `\n`, "\n"), last.Diff)
			if tc.diff == "" {
				require.Equal(t, event.DiffSkippedUnknown, last.DiffSkipped)
			}
		})
	}
}

// TestMessageTextCapped holds one endless message to a bounded kept
// text: every delta is streamed, the complete message is cut and marked.
func TestMessageTextCapped(t *testing.T) {
	t.Parallel()
	p := Agent.NewParser()
	chunk := strings.Repeat("é", 1000) // 2000 bytes, after a distinct number
	var out []event.Body
	var streamed, sent int
	for i := range 3 * event.MaxTextBytes / len(chunk) {
		c := strconv.Itoa(100000+i) + chunk
		sent += len(c)
		out, _ = p.Parse(out[:0], []byte(delta(c)))
		for _, b := range out {
			streamed += len(b.(*event.TextDelta).Text)
		}
	}
	require.Equal(t, sent, streamed, "every delta is streamed")
	out, _ = p.Parse(nil, []byte(`{"type":"result","status":"success"}`))
	msg := out[0].(*event.Message)
	require.True(t, msg.Truncated)
	require.LessOrEqual(t, len(msg.Text), event.MaxTextBytes)
	require.Greater(t, len(msg.Text), event.MaxTextBytes-4)
	require.True(t, utf8.ValidString(msg.Text), "cut on a character boundary")
	r := out[len(out)-1].(*event.Result)
	require.True(t, r.TextTruncated)
	require.Equal(t, msg.Text, r.Text)
}

func TestParseUnknown(t *testing.T) {
	t.Parallel()
	p := Agent.NewParser()
	for _, l := range []string{"", "Ripgrep is not available.", "{", `{"type":"x"}`, `{"type":"message","role":"system"}`, `"s"`} {
		out, known := p.Parse(nil, []byte(l))
		require.Empty(t, out, "line %q", l)
		require.False(t, known, "line %q", l)
	}
}

// The fuzz target and the benchmarks make bench reads: adaptertest holds
// them for every adapter.
func FuzzParse(f *testing.F)          { adaptertest.FuzzParse(f, Agent) }
func BenchmarkNormalize(b *testing.B) { adaptertest.BenchNormalize(b, Agent) }
func BenchmarkParse(b *testing.B)     { adaptertest.BenchParse(b, Agent) }

// BenchmarkHugeMessage normalizes one message of 128 MiB of deltas and
// reports the peak heap: what is kept of it is capped, so the heap stays
// flat whatever the message's size.
func BenchmarkHugeMessage(b *testing.B) {
	adaptertest.BenchPeakHeap(b, Agent, 128<<10, 1040, delta)
}

// The shapes exitCode reads, as regexps: the reference it is fuzzed
// against. The first is Gemini's display of a command that printed
// nothing; the second its --debug report, whose Exit Code only its later
// fields follow.
var (
	exitDisplayRE = regexp.MustCompile(`(?:^|\n)Command exited with code: (-?\d+)$`)
	exitReportRE  = regexp.MustCompile(`(?s)^(?:Output: |Command: ).*\nExit Code: (-?\d+)(?:\n(?:Signal|Background PIDs|Process Group PGID): [^\n]*)*$`)
)

func exitCodeByRegexp(out string) (int, bool) {
	for _, re := range []*regexp.Regexp{exitDisplayRE, exitReportRE} {
		if m := re.FindStringSubmatch(out); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				return n, true
			}
		}
	}
	return 0, false
}

// TestExitCode: the exit status is Gemini's, after the command's output,
// never a number the command printed.
func TestExitCode(t *testing.T) {
	t.Parallel()
	for out, want := range map[string]*int{
		// The reviewer's case: concurrently's own lines, then the status.
		"[0] npm run lint exited with code 0\n[1] npm run test exited with code 1\nCommand exited with code: 1": event.Int(1),
		// gemini-cli's display of a command that printed nothing.
		"Command exited with code: 127": event.Int(127),
		// Its display of one that printed something: the output alone.
		"[0] npm run lint exited with code 0\n[1] npm run test exited with code 1": nil,
		"make test\nExit Code: 2":                    nil, // a script's own echo
		"Command exited with code: 1\nand then more": nil,
		"Command terminated by signal: SIGKILL":      nil,
		"":                                           nil,
		// --debug: the report the model reads (0.27 on, then before).
		"Output: FAIL\nExit Code: 1\nProcess Group PGID: 4242":                                            event.Int(1),
		"Output: x\nError: spawn failed\nExit Code: -2\nSignal: 9\nBackground PIDs: 7, 8":                 event.Int(-2),
		"Output: Exit Code: 3\nProcess Group PGID: 4242":                                                  nil, // exit 0: no field
		"Output: log\nExit Code: 3\nmore log\nProcess Group PGID: 4242":                                   nil,
		"Command: false\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 1\nSignal: (none)": event.Int(1),
		"Command: sleep 9\nOutput: (empty)\nExit Code: (none)\nSignal: 15":                                nil,
		"Output: x\nExit Code: 99999999999999999999":                                                      nil,
	} {
		n, ok := exitCode(out)
		if want == nil {
			require.False(t, ok, "%q", out)
			continue
		}
		require.True(t, ok, "%q", out)
		require.Equal(t, *want, n, "%q", out)
	}
}

func FuzzExitCode(f *testing.F) {
	for _, s := range []string{"", "Exit Code: 1", "x\nExit Code: -2\n", "Command exited with code: 127", "a Exit Code: 3",
		"exited with code 4", "Exit Code:5", "Exit Code: x\nExit Code: 6", "exited with code: 99999999999999999999", "xit", "Exit Code: -",
		"a\nCommand exited with code: 1", "Command exited with code: 1\n", "Output: a\nExit Code: 2", "Output: a\nExit Code: 2\nSignal: 9",
		"Command: x\nExit Code: 3\nBackground PIDs: 1\nProcess Group PGID: 2", "Output: a\nExit Code: 2\nb", "Output: Exit Code: 2",
		"Output: a\nExit Code: 2\nExit Code: 99999999999999999999", "Output: a\nExit Code: -\nSignal: 9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		n, ok := exitCode(out)
		wn, wok := exitCodeByRegexp(out)
		require.Equal(t, wok, ok, "%q", out)
		require.Equal(t, wn, n, "%q", out)
	})
}

// TestGoldenDiffsApply applies every diff of the goldens, in order, with
// git apply to the files as the calls before it left them (Gemini's
// stream shows no file it did not create, so each run starts from an
// empty directory), and checks the files the run ends with.
func TestGoldenDiffsApply(t *testing.T) {
	t.Parallel()
	want := map[string]map[string]string{
		"edit_write": {"tmp/work/NOTES.md": "# Notes\n\nFoo is now Bar.\n"},
		"write_replace": {
			"tmp/work/greet.go": "package main\n\nfunc hi() string {\n\treturn \"hi\"\n}\n\nfunc main() {\n\tprintln(hi())\n}\n",
			"tmp/work/NOTES.md": "hello is now hi\n",
		},
		// Gemini CLI 0.61 (no output on success): the files created by
		// replace, and those the stream then showed whole.
		"write_replace_061": {"tmp/hce/g2/NOTES.md": "beta is BETA\n"},
		"create_edit_061":   {"tmp/hce/g3/NOTES.md": "# Notes\n\nBETA\ngamma\n", "tmp/hce/g3/v.txt": "v2"},
	}
	// Files a call whose diff is unknown left (the stream does not say
	// whether write_file created v.txt, so its write has none).
	seed := map[string]map[string]string{"create_edit_061": {"tmp/hce/g3/v.txt": "v1"}}
	for _, c := range adaptertest.DiffCaptures(t, testdata) {
		dir := t.TempDir()
		for path, text := range seed[c.Name] {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, path), []byte(text), 0o644))
		}
		for _, te := range c.Diffs {
			adaptertest.GitApply(t, dir, te.Diff)
		}
		files, ok := want[c.Name]
		if len(c.Diffs) == 0 {
			require.False(t, ok, "%s: no diff in the golden", c.Name)
			continue
		}
		require.True(t, ok, "%s has diffs: add the files it ends with", c.Name)
		for path, text := range files {
			got, err := os.ReadFile(filepath.Join(dir, path))
			require.NoError(t, err)
			require.Equal(t, text, string(got), "%s: %s", c.Name, path)
		}
	}
}

// TestMillisAgreesWithTimeParse: the fixed-layout fast path gives what
// time.Parse gives, for the layout Gemini writes and for everything near it.
func TestMillisAgreesWithTimeParse(t *testing.T) {
	var cases []string
	for _, s := range []string{
		"2026-11-20T10:00:00.123Z", "1999-12-31T23:59:59.999Z", "2024-02-29T00:00:00.000Z",
		"2023-02-29T00:00:00.000Z", "2026-13-01T00:00:00.000Z", "2026-00-10T00:00:00.000Z",
		"2026-11-31T00:00:00.000Z", "2026-11-20T24:00:00.000Z", "2026-11-20T10:60:00.000Z",
		"2026-11-20T10:00:60.000Z", "2026-11-20T10:00:00.12aZ", "2026-11-20T10:00:00.123+01:00",
		"2026-11-20T10:00:00Z", "2026-11-20T10:00:00.123456Z", "1970-01-01T00:00:00.000Z", "", "x",
		"2000-02-29T00:00:00.000Z", "1900-02-29T00:00:00.000Z", "2100-02-29T00:00:00.000Z", "2026-04-31T00:00:00.000Z",
		"2026-06-30T23:59:59.999Z", "2026-12-32T00:00:00.000Z", "2026-01-00T00:00:00.000Z", "0000-01-01T00:00:00.000Z",
		"2026-1a-01T00:00:00.000Z", "-026-01-01T00:00:00.000Z", "2026-11-20T-1:00:00.000Z",
	} {
		cases = append(cases, s)
	}
	// Every month and day, and one past each end, of leap and common years.
	for _, y := range []int{1900, 2000, 2023, 2024} {
		for m := 0; m <= 13; m++ {
			for d := 0; d <= 32; d++ {
				cases = append(cases, fmt.Sprintf("%04d-%02d-%02dT12:34:56.789Z", y, m, d))
			}
		}
	}
	var shared clock // keeps the date of the case before
	for _, s := range cases {
		want := int64(0)
		if tm, err := time.Parse(time.RFC3339Nano, s); err == nil && tm.UnixMilli() > 0 {
			want = tm.UnixMilli()
		}
		require.Equal(t, want, new(clock).millis(`"`+s+`"`), s)
		require.Equal(t, want, shared.millis(`"`+s+`"`), s)
	}
	// A timestamp with escapes is read as its text.
	plain := new(clock).millis(`"2026-11-20T10:00:00.123Z"`)
	require.NotZero(t, plain)
	require.Equal(t, plain, new(clock).millis(`"2026-11-20T10:00:00.123\u005a"`))
	require.Equal(t, plain, new(clock).millis(`"2026-11-20T10:00:00.12\u0033Z"`))
	require.Zero(t, new(clock).millis(`"2026-11-20T10:00:00.12\\Z"`))
}

// TestUnsureContentGivesOnlyAnAgentPatch: Gemini CLI 0.61 does not say
// whether write_file created its file, and one it overwrote keeps its
// CRLF line ends: a replace on what it wrote is exact but for line ends,
// so its diff goes to the live run to check against the disk, never to
// the stream.
func TestUnsureContentGivesOnlyAnAgentPatch(t *testing.T) {
	t.Parallel()
	out := adaptertest.Bodies(newParser(),
		`{"type":"init","timestamp":"2026-11-25T01:26:43.861Z","session_id":"s","model":"m"}`,
		`{"type":"tool_use","timestamp":"2026-11-25T01:26:45.385Z","tool_name":"write_file","tool_id":"w","parameters":{"content":"a\nb\n","file_path":"/w/f.txt"}}`,
		`{"type":"tool_result","timestamp":"2026-11-25T01:26:46.696Z","tool_id":"w","status":"success"}`,
		`{"type":"tool_use","timestamp":"2026-11-25T01:26:47.132Z","tool_name":"replace","tool_id":"r","parameters":{"file_path":"/w/f.txt","new_string":"B\n","old_string":"b\n"}}`,
		`{"type":"tool_result","timestamp":"2026-11-25T01:26:47.321Z","tool_id":"r","status":"success"}`,
		`{"type":"result","timestamp":"2026-11-25T01:26:48.995Z","status":"success","stats":{}}`)
	var ends []*event.ToolEnd
	for _, b := range out {
		if e, ok := b.(*event.ToolEnd); ok {
			ends = append(ends, e)
		}
	}
	require.Len(t, ends, 2)
	for _, e := range ends {
		require.Empty(t, e.Diff)
		require.Equal(t, event.DiffSkippedUnknown, e.DiffSkipped)
	}
	require.Empty(t, ends[0].AgentPatch, "what was there before the write is not known at all")
	require.Equal(t, "--- a/w/f.txt\n+++ b/w/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n", ends[1].AgentPatch)
}

// TestOverloadedHasItsStatus: Gemini's fixed text for a 503 (its result's
// error has no code) is overloaded with http_status 503, as over ACP,
// where Gemini sends the same text with the code.
func TestOverloadedHasItsStatus(t *testing.T) {
	e := agentError("[API Error: The model is overloaded. Please try again later.]", true)
	require.Equal(t, event.ClassOverloaded, e.Class)
	require.Equal(t, 503, e.Status)
}

// TestOddMembers: members the walk decodes as it reads them (duplicate
// keys, escapes, values that are no string, a string that does not end)
// read as jsonscan.Str and StrOnly read their raw values, and the first
// of duplicates wins.
func TestOddMembers(t *testing.T) {
	t.Parallel()
	bodies, known := adaptertest.ParseLines(newParser(),
		`{"type":"init","session_id":"s\u0031","session_id":"s2","model":7}`,
		`{"type":"message","role":"assistant","content":"","content":"x","delta":true}`,
		`{"type":"message","role":"assist\u0061nt","content":"a\nb","delta":true}`,
		`{"type":"tool_use","tool_name":42,"tool_id":"t1","parameters":{"file_path":7,"path":"/w/p"}}`,
		`{"type":"tool_result","tool_id":"t1","status":"success","output":{"a":1}}`,
		`{"type":"tool_\u0075se","tool_name":"read_file","tool_id":"t2","parameters":{"file_path":7,"absolute_path":"","path":"/w/\u00e9"},"parameters":{"file_path":"/w/r"}}`,
		`{"type":"tool_result","tool_id":"t2","tool_id":"t3","status":"err\u006fr","status":"success","output":null}`,
		`{"type":"tool_use","tool_name":"replace","tool_id":"t4","parameters":{"file_path":"/w/a","old_string":null,"new_string":"y"}}`,
		`{"type":"tool_result","tool_id":"t4","status":"success"}`,
		`{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t5","parameters":{"command":"c1","command":"c2"}}`,
		`{"type":5,"role":"assistant","content":"no"}`,
		`{"type":"message","role":"assistant","content":"abc\"}`,
		`{"type":"error","severity":"warn\u0069ng","severity":"error","message":123}`,
		`{"type":"result","status":"success","stats":{"input_tokens":20,"input_tokens":99,"output_tokens":10,"cached":5,"cached":7,"input":15,"total_tokens":40,"duration_ms":3,"duration_ms":9}}`)
	require.Equal(t, []bool{true, true, true, true, true, true, true, true, true, true, false, true, true, true}, known)
	require.Equal(t, &event.SessionStart{SessionID: "s1", Model: "7"}, bodies[0])
	require.Equal(t, &event.TextDelta{Text: ""}, bodies[1])
	require.Equal(t, &event.TextDelta{Text: "a\nb"}, bodies[2])
	require.Equal(t, &event.Message{Role: event.RoleAssistant, Text: "a\nb"}, bodies[3])
	start := bodies[4].(*event.ToolStart)
	require.Equal(t, []string{"t1", "42", string(event.KindOther), ""}, []string{start.CallID, start.Name, string(start.Kind), start.Path})
	end := bodies[5].(*event.ToolEnd)
	require.Equal(t, []string{"t1", "42", `{"a":1}`}, []string{end.CallID, end.Name, end.Output})
	start = bodies[6].(*event.ToolStart)
	require.Equal(t, []string{"t2", string(event.KindRead), "/w/é"}, []string{start.CallID, string(start.Kind), start.Path},
		"the first path that is a non-empty string, of the first parameters")
	end = bodies[7].(*event.ToolEnd)
	require.Equal(t, []string{"t2", string(event.StatusError), ""}, []string{end.CallID, string(end.Status), end.Output})
	require.Equal(t, "/w/a", bodies[8].(*event.ToolStart).Path)
	end = bodies[9].(*event.ToolEnd)
	require.Equal(t, []string{"/w/a"}, end.Paths)
	require.Equal(t, event.DiffSkippedUnknown, end.DiffSkipped, "an old_string that is no string")
	require.Equal(t, "c1", bodies[10].(*event.ToolStart).Command)
	require.Equal(t, &event.Message{Role: event.RoleAssistant, Text: `abc"}`}, bodies[11])
	require.Equal(t, &event.Warning{Code: event.WarnAgentWarning, Message: "123"}, bodies[12])
	u := event.Usage{InputTokens: 15, CacheReadTokens: 5, OutputTokens: 20, ReasoningTokens: 10}
	require.Equal(t, &u, bodies[13])
	r := bodies[14].(*event.Result)
	require.Equal(t, []any{int64(3), u, `abc"}`}, []any{r.DurationMS, r.Usage, r.Text})
	require.Len(t, bodies, 15)
}
