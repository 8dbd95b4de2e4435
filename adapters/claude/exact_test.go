package claude

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

const testdata = "../../testdata/claude"

// normalized runs a capture through the adapter as harness parse does,
// and returns the bodies of the events.
func normalized(t *testing.T, name string) []event.Body {
	t.Helper()
	native, err := os.ReadFile(filepath.Join(testdata, name+".jsonl"))
	require.NoError(t, err)
	evs, err := event.ReadAll(bytes.NewReader(adaptertest.Normalize(Agent, native, false)))
	require.NoError(t, err)
	out := make([]event.Body, len(evs))
	for i, ev := range evs {
		out[i] = ev.Body
	}
	return out
}

// tokens is u without its cost, which usage events do not carry.
func tokens(u event.Usage) event.Usage {
	u.CostUSD, u.CostEstimated = 0, false
	return u
}

// TestUsageAddsUpInEveryCapture: the usage events of every capture sum
// to result.usage, field by field.
func TestUsageAddsUpInEveryCapture(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(testdata, "*.jsonl"))
	require.NoError(t, err)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			evs := normalized(t, name)
			var sum event.Usage
			for _, u := range only[*event.Usage](evs) {
				sum.Add(*u)
			}
			r := only[*event.Result](evs)
			require.Len(t, r, 1)
			require.Equal(t, tokens(r[0].Usage), tokens(sum))
		})
	}
}

// TestUsagePerCall holds the events to what the scripted model sent for
// each of the multi scenario's three calls: input 1000, 1500, 1800 of which
// 300, 1200, 1500 cached; output 200, 150, 250.
func TestUsagePerCall(t *testing.T) {
	t.Parallel()
	usages := func(name string) []event.Usage {
		var out []event.Usage
		for _, u := range only[*event.Usage](normalized(t, name)) {
			out = append(out, *u)
		}
		return out
	}
	t.Run("partial-messages-one-event-per-call-exact", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, []event.Usage{
			{InputTokens: 700, OutputTokens: 200, CacheReadTokens: 300},
			{InputTokens: 300, OutputTokens: 150, CacheReadTokens: 1200},
			{InputTokens: 300, OutputTokens: 250, CacheReadTokens: 1500},
		}, usages("multi-partial"))
	})
	t.Run("default-mode-input-per-call-output-from-the-totals", func(t *testing.T) {
		t.Parallel()
		// The assistant lines carry output_tokens 1 (message_start's
		// placeholder): never counted. The output is in result.usage only.
		require.Equal(t, []event.Usage{
			{InputTokens: 700, CacheReadTokens: 300},
			{InputTokens: 300, CacheReadTokens: 1200},
			{InputTokens: 300, CacheReadTokens: 1500},
			{OutputTokens: 600},
		}, usages("multi"))
	})
}

// nativeFacts reads from a capture's lines, by tool_use id, the file a
// call found (tool_use_result.originalFile) and the content a Write wrote.
func nativeFacts(lines []string) (original, written map[string]string) {
	original, written = map[string]string{}, map[string]string{}
	for _, line := range lines {
		l := gjson.Parse(line)
		l.Get("message.content").ForEach(func(_, blk gjson.Result) bool {
			switch {
			case blk.Get("type").Str == "tool_use" && blk.Get("name").Str == "Write":
				written[blk.Get("id").Str] = blk.Get("input.content").Str
			case blk.Get("type").Str == "tool_result":
				if o := l.Get("tool_use_result.originalFile"); o.Type == gjson.String {
					original[blk.Get("tool_use_id").Str] = o.Str
				}
			}
			return true
		})
	}
	return original, written
}

// TestEveryDiffApplies replays the diffs of every capture with git apply,
// in order, on a directory holding each file as the call found it, and
// checks the file each gives: a Write's content, the next call's
// originalFile, and for the edits capture the files the real run left.
func TestEveryDiffApplies(t *testing.T) {
	t.Parallel()
	finals := map[string]map[string]string{
		"edits": {"new.txt": "one\n2\nthree\n", "pre.txt": "rewritten\n"},
	}
	applied := 0
	for _, c := range adaptertest.DiffCaptures(t, testdata) {
		original, written := nativeFacts(c.Native)
		dir := t.TempDir()
		state := map[string]*string{}
		for _, te := range c.Diffs {
			path := diffPath(t, te.Diff)
			before, after := map[string]*string{}, map[string]*string{}
			if o, ok := original[te.CallID]; ok {
				if s := state[path]; s != nil {
					require.Equal(t, o, *s, "%s %s: the file the call found is not what the earlier diffs gave", c.Name, te.CallID)
				}
				before[path] = &o
			} else if state[path] == nil {
				require.True(t, strings.HasPrefix(te.Diff, "--- /dev/null\n"), "%s %s: a diff of a file the stream never showed", c.Name, te.CallID)
			}
			if w, ok := written[te.CallID]; ok {
				after[path] = &w // what the Write wrote
			}
			adaptertest.ApplyDiff(t, dir, te.Diff, before, after)
			got, err := os.ReadFile(filepath.Join(dir, path))
			require.NoError(t, err)
			s := string(got)
			state[path] = &s
			applied++
		}
		for path, want := range finals[c.Name] {
			require.NotNil(t, state[path], "%s: no diff for %s", c.Name, path)
			require.Equal(t, want, *state[path], "%s: %s after the run", c.Name, path)
		}
	}
	require.GreaterOrEqual(t, applied, 7)
}

// diffPath is the file a diff's headers name, relative.
func diffPath(t *testing.T, diff string) string {
	t.Helper()
	for _, l := range strings.Split(diff, "\n") {
		if p, ok := strings.CutPrefix(l, "+++ b/"); ok {
			return p
		}
		if p, ok := strings.CutPrefix(l, "--- a/"); ok {
			return p
		}
	}
	t.Fatalf("no file in the headers of\n%s", diff)
	return ""
}

// TestNativeDurations: by default a tool_end's duration is the time from
// its tool_use's line to its tool_result's line; with UseWallClock the
// parser leaves the duration to the Stream's clock (a live run).
func TestNativeDurations(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(testdata, "edits.jsonl"))
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	durations := func(native bool) map[string]int64 {
		p := newParser()
		if !native {
			p.UseWallClock()
		}
		out, _ := adaptertest.ParseLines(p, lines...)
		got := map[string]int64{}
		for _, te := range only[*event.ToolEnd](out) {
			got[te.CallID] = te.DurationMS
		}
		return got
	}
	// 05:…28.855 → 28.912, 28.864 → 28.934, 28.972 → 28.995,
	// 28.976 → 29.016, 29.046 → 29.063 (the lines' timestamps).
	require.Equal(t, map[string]int64{"toolu_mock000002": 57, "toolu_mock000003": 70, "toolu_mock000005": 23,
		"toolu_mock000006": 40, "toolu_mock000008": 17}, durations(true))
	for id, d := range durations(false) {
		require.Zero(t, d, id)
	}
	require.Equal(t, time.Date(2026, 11, 23, 20, 21, 28, 855e6, time.UTC), parseTime(`"2026-11-23T20:21:28.855Z"`))
}

// TestFailureShapes: an API failure is one fatal agent_error with its
// class and HTTP status, and the result's text holds no error message.
func TestFailureShapes(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]struct {
		class  string
		status int
	}{
		"error.maxretries1":      {event.ClassServerError, 500},
		"overloaded.maxretries1": {event.ClassOverloaded, 529},
		"abandoned-partial":      {event.ClassNetwork, 0},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			evs := normalized(t, name)
			errs := only[*event.Error](evs)
			require.Len(t, errs, 1)
			require.Equal(t, event.ErrAgentError, errs[0].Code)
			require.True(t, errs[0].Fatal)
			require.Equal(t, want.class, errs[0].Class)
			require.Equal(t, want.status, errs[0].Status)
			r := only[*event.Result](evs)[0]
			require.Equal(t, event.ResultError, r.Status)
			require.NotContains(t, r.Text, "API Error")
		})
	}
	t.Run("abandoned-text-is-no-message", func(t *testing.T) {
		t.Parallel()
		evs := normalized(t, "abandoned-partial")
		require.Empty(t, only[*event.Message](evs))
		require.Len(t, only[*event.TextDelta](evs), 3)
	})
}

func TestStatusClass(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status int64
		text   string
		class  string
	}{
		{500, "", event.ClassServerError},
		{502, "", event.ClassServerError},
		{503, "", event.ClassOverloaded},
		{529, "", event.ClassOverloaded},
		{429, "", event.ClassRateLimit},
		{0, "API Error: 500 boom", event.ClassServerError},
		{0, "API Error: 529 Overloaded", event.ClassOverloaded},
		{0, "API Error: 5000 tokens", ""},
		{0, "API Error: Stream idle timeout", ""},
	} {
		require.Equal(t, c.class, statusClass(c.status, c.text), "%d %q", c.status, c.text)
	}
}

// TestLongBlockIsCapped: what one streamed block accumulates for its
// complete form is capped and the cut is marked; every delta is still
// streamed.
func TestLongBlockIsCapped(t *testing.T) {
	t.Parallel()
	chunk := strings.Repeat("é", 1000) // 2000 bytes: cuts must keep runes whole
	delta := `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + chunk + `"}},"parent_tool_use_id":null}`
	t.Run("text", func(t *testing.T) {
		t.Parallel()
		p := newParser()
		lines := []string{msgStart, textStart}
		n := event.MaxTextBytes/len(chunk) + 50
		for range n {
			lines = append(lines, delta)
		}
		var out []event.Body
		for _, l := range append(lines, textStop) {
			out, _ = p.Parse(out, []byte(l))
		}
		require.LessOrEqual(t, cap(p.streams[0].blocks[0].buf), 2*maxBlockText)
		out, _ = p.Parse(out, []byte(msgDelta))
		out, _ = p.Parse(out, []byte(msgStop))
		require.Len(t, only[*event.TextDelta](out), n)
		msgs := only[*event.Message](out)
		require.Len(t, msgs, 1)
		require.True(t, msgs[0].Truncated)
		require.LessOrEqual(t, len(msgs[0].Text), event.MaxTextBytes)
		require.True(t, strings.HasPrefix(strings.Repeat(chunk, n), msgs[0].Text))
	})
	t.Run("tool-input", func(t *testing.T) {
		t.Parallel()
		p := newParser()
		piece := `{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"` + strings.Repeat("x", 4096) + `"}},"parent_tool_use_id":null}`
		lines := []string{msgStart, toolStartEv, toolDelta1}
		for range event.MaxInputBytes/4096 + 10 {
			lines = append(lines, piece)
		}
		lines = append(lines, toolStop, msgStop)
		out, _ := adaptertest.ParseLines(p, lines...)
		require.LessOrEqual(t, len(p.streams[0].blocks[1].buf), maxBlockInput)
		starts := only[*event.ToolStart](out)
		require.Len(t, starts, 1)
		require.True(t, starts[0].InputTruncated)
		require.JSONEq(t, `{}`, string(starts[0].Input))
	})
}
