package atif_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/atif"
	"github.com/agentharness/harness/atif/atiftest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/logger"
)

// writeLog writes evs as the session log of run in dir, with a meta,
// and returns the log's path.
func writeLog(t testing.TB, dir, run string, evs []event.Event) string {
	t.Helper()
	path := logger.Path(dir, run, logger.ExtEvents)
	f, err := os.Create(path)
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	for _, ev := range evs {
		b, err := json.Marshal(ev)
		require.NoError(t, err)
		w.Write(append(b, '\n'))
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
	meta := `{"run":"` + run + `","agent":"claude","status":"success","prompt_preview":"hello"}`
	require.NoError(t, os.WriteFile(logger.Path(dir, run, logger.ExtMeta), []byte(meta), 0o600))
	return path
}

// exportBoth returns what Export writes of run, and what Marshal writes
// of what Load returns.
func exportBoth(t testing.TB, dir, run string) (streamed, whole string) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, atif.Export(dir, run, "", &buf))
	tr, err := atif.Load(dir, run, "")
	require.NoError(t, err)
	data, err := atif.Marshal(tr)
	require.NoError(t, err)
	return buf.String(), string(data)
}

// randomStream is a stream of n events from a small alphabet, on a few
// call ids that are also parents: sub-agents one after another, at once,
// nested, referred to before or after they start; calls ended twice,
// never, or before they start, or ended late, at a turn's end or the
// result, as the stream ends the calls left open; usage before any step;
// a result or not.
func randomStream(rng *rand.Rand, n int) []event.Event {
	ids := []string{"c1", "c2", "c3", "c4", "c5"}
	parent := func() string {
		if rng.IntN(3) == 0 {
			return ids[rng.IntN(len(ids))]
		}
		return ""
	}
	var evs []event.Event
	add := func(body event.Body) {
		i := len(evs)
		evs = append(evs, event.Event{V: 1, Type: body.EventType(), Run: "run_r", Seq: int64(i + 1), TS: int64(1000 + i), Body: body})
	}
	open := map[string]bool{} // started and not ended, as the stream sees them
	for i := range n {
		var body event.Body
		switch rng.IntN(12) {
		case 0:
			body = &event.SessionStart{Agent: "claude", SessionID: fmt.Sprint("s", rng.IntN(2))}
		case 1:
			body = &event.Reasoning{Text: fmt.Sprint("r", i), ParentCallID: parent(), Truncated: rng.IntN(4) == 0}
		case 2, 3:
			role := []string{"assistant", "assistant", "user", "system"}[rng.IntN(4)]
			body = &event.Message{Role: role, Text: fmt.Sprint("m", i), ParentCallID: parent()}
		case 4, 5:
			body = &event.ToolStart{CallID: ids[rng.IntN(len(ids))], Name: "Task", Kind: event.KindTask,
				Input: json.RawMessage(`{"a":1}`), ParentCallID: parent()}
		case 6, 7:
			body = &event.ToolEnd{CallID: ids[rng.IntN(len(ids))], Name: "Task", Status: "ok", Output: fmt.Sprint("o", i)}
		case 8:
			body = &event.Usage{InputTokens: int64(rng.IntN(10)), OutputTokens: 1, CostUSD: float64(rng.IntN(3)) / 10}
		case 9:
			body = &event.TurnStart{Prompt: fmt.Sprint("p", i), TurnID: "t"}
			if rng.IntN(2) == 0 {
				body = &event.TurnEnd{Status: event.ResultSuccess}
			}
		case 10:
			body = &event.Error{Code: "agent_error", Message: fmt.Sprint("e", i)}
		case 11:
			body = &event.Result{Status: event.ResultSuccess, SessionID: "sr", Usage: event.Usage{InputTokens: 3, CostUSD: 0.3}}
		}
		switch b := body.(type) {
		case *event.ToolStart:
			open[b.CallID] = true
		case *event.ToolEnd:
			delete(open, b.CallID)
		case *event.TurnEnd, *event.Result:
			if rng.IntN(2) == 0 {
				// The calls left open end here (synthetic).
				for _, id := range ids {
					if open[id] {
						add(&event.ToolEnd{CallID: id, Name: "Task", Status: "error", Synthetic: true, Output: fmt.Sprint("late", i)})
					}
				}
				clear(open)
			}
		}
		add(body)
	}
	return evs
}

// TestExportIsMarshal: Export writes byte for byte what Marshal writes
// of Load's trajectory, a step at a time: for every captured stream, the
// same broken, random streams full of sub-agents (one after another, at
// once, nested: a pass each) and of calls that end late, and each cut in
// its last line; as Export waits for every call, takes every call's end
// as late (from its first pass), and takes a few.
func TestExportIsMarshal(t *testing.T) {
	all := streams(t)
	var names []string
	for name := range all {
		names = append(names, name)
	}
	slices.Sort(names)
	cases := map[string][]event.Event{}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, name := range names {
		cases[name] = all[name]
		for k := range 1 {
			var broken []event.Event
			for _, ev := range all[name] {
				switch rng.IntN(6) {
				case 0:
				case 1:
					broken = append(broken, ev, ev)
				default:
					broken = append(broken, ev)
				}
			}
			cases[fmt.Sprint(name, "/broken", k)] = broken
		}
	}
	for k := range 40 {
		cases[fmt.Sprint("random", k)] = randomStream(rng, 1+rng.IntN(50))
	}
	for _, late := range []struct {
		name          string
		bytes         int64
		events, count int
	}{{" waiting", 1 << 40, 1 << 30, 0}, {" all-late", -1, -1, 1 << 30}, {" 2-late", -1, -1, 2}} {
		func() {
			defer atif.SetLate(late.bytes, late.events, late.count)()
			exportIsMarshal(t, cases, late.name)
		}()
	}
	// As Export is.
	exportIsMarshal(t, cases, "")
}

func exportIsMarshal(t *testing.T, cases map[string][]event.Event, suffix string) {
	dir := t.TempDir()
	for name, evs := range cases {
		name += suffix
		path := writeLog(t, dir, "run_x", evs)
		streamed, whole := exportBoth(t, dir, "run_x")
		require.Equal(t, whole, streamed, name)
		if strings.HasPrefix(name, "random") {
			_, err := atiftest.Validate([]byte(streamed))
			require.NoError(t, err, name)
		}
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		if !strings.Contains(name, "/broken") && len(data) > 20 {
			require.NoError(t, os.WriteFile(path, data[:len(data)-10], 0o600)) // the last line cut
			streamed, whole = exportBoth(t, dir, "run_x")
			require.Equal(t, whole, streamed, name+" cut")
		}
	}
}

// TestExportGolden: the golden trajectory, as sessions export writes it.
func TestExportGolden(t *testing.T) {
	dir := t.TempDir()
	evs := readEvents(t, "../testdata/opencode/multi_step_reasoning.golden.ndjson")
	run := evs[0].Run
	writeLog(t, dir, run, evs)
	var buf bytes.Buffer
	require.NoError(t, atif.Export(dir, run, "How many files are there, and are there tests?", &buf))
	want, err := os.ReadFile("testdata/opencode-multi_step_reasoning.trajectory.json")
	require.NoError(t, err)
	require.Equal(t, string(want), buf.String())
}

// TestExportBadLine: a line that does not decode, not the last, is an
// error naming it, before anything is written.
func TestExportBadLine(t *testing.T) {
	dir := t.TempDir()
	evs := readEvents(t, "../testdata/claude/subagent-maxturns.golden.ndjson")
	path := writeLog(t, dir, "run_x", evs)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	i := len(data) / 2
	require.NoError(t, os.WriteFile(path, slices.Concat(data[:i], []byte("\n{\n"), data[i:]), 0o600))
	var buf bytes.Buffer
	err = atif.Export(dir, "run_x", "", &buf)
	require.ErrorContains(t, err, "run_x.ndjson: line ")
	require.Zero(t, buf.Len())
	require.ErrorIs(t, atif.Export(dir, "run_nope", "", &buf), logger.ErrNotFound)
}

// peakWriter records the most heap in use at any of its writes.
type peakWriter struct {
	n    int64
	peak uint64
}

func (w *peakWriter) Write(p []byte) (int, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w.peak = max(w.peak, ms.HeapAlloc)
	w.n += int64(len(p))
	return len(p), nil
}

// TestExportMemory: exporting a run of many large tool outputs holds a
// few of them, not the run: the heap in use while the trajectory is
// written stays under 16 outputs' worth, for a log of 32. Load and
// Marshal held the run's events, its trajectory and the file's bytes
// whole: over twice the log.
func TestExportMemory(t *testing.T) {
	const outputs, size = 32, 256 << 10
	held := exportHeld(t, outputs, size, false)
	require.Less(t, held, int64(16*size), "held %d bytes", held)
}

// TestExportMemoryLateCall: a call started before the outputs that ends
// only after them (a background command, a call the stream ends at the
// result) does not hold the steps after its own: its end is read in the
// first pass. Waiting for it held every output (9 MiB for the 8 MiB log).
func TestExportMemoryLateCall(t *testing.T) {
	const outputs, size = 32, 256 << 10
	held := exportHeld(t, outputs, size, true)
	require.Less(t, held, int64(16*size), "held %d bytes", held)
}

// exportHeld exports a run of outputs tool outputs of size bytes, after
// a call that ends after them when late, and returns the most heap the
// export held at a write.
func exportHeld(t *testing.T, outputs, size int, late bool) int64 {
	dir := t.TempDir()
	var log bytes.Buffer
	seq := 0
	line := func(body string) {
		seq++
		fmt.Fprintf(&log, `{"v":1,"run":"run_big","seq":%d,"ts":%d,%s}`+"\n", seq, 1000+seq, body)
	}
	line(`"type":"session_start","agent":"claude","cwd":"/w","pty":false,"argv":[]`)
	if late {
		line(`"type":"tool_start","call_id":"bg","name":"Bash","kind":"shell","input":{"command":"sleep 600"}`)
		line(`"type":"usage","input_tokens":10,"output_tokens":1`)
	}
	out := strings.Repeat("0123456789abcdef", size/16) // as JSON, itself
	for i := range outputs {
		id := fmt.Sprint("call_", i)
		line(`"type":"tool_start","call_id":"` + id + `","name":"Bash","kind":"shell","input":{"command":"cat"}`)
		line(`"type":"tool_end","call_id":"` + id + `","name":"Bash","kind":"shell","status":"ok","output":"` + out + `"`)
		line(`"type":"usage","input_tokens":10,"output_tokens":1`)
	}
	if late {
		line(`"type":"tool_end","call_id":"bg","name":"Bash","kind":"shell","status":"error","synthetic":true,"output":""`)
	}
	line(`"type":"result","status":"success","text":"","duration_ms":1,"usage":{"input_tokens":320,"output_tokens":32},` +
		`"stats":{"native_lines":1,"unparsed_lines":0,"events":1,"tool_calls":32}`)
	require.NoError(t, os.WriteFile(logger.Path(dir, "run_big", logger.ExtEvents), log.Bytes(), 0o600))
	require.NoError(t, os.WriteFile(logger.Path(dir, "run_big", logger.ExtMeta), []byte(`{"run":"run_big","agent":"claude"}`), 0o600))
	log = bytes.Buffer{}

	// Little garbage: the heap in use at a write is close to what is held.
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w := &peakWriter{}
	require.NoError(t, atif.Export(dir, "run_big", "", w))
	require.Greater(t, w.n, int64(outputs*size), "every output written")
	held := int64(w.peak) - int64(ms.HeapAlloc)
	t.Logf("log %d MiB, held at most %.1f MiB", outputs*size>>20, float64(held)/(1<<20))
	return held
}

// TestExportSubagentsInTurn: sub-agents one after another take one
// pass, at once one each; each is written whole, in order.
func TestExportSubagentsInTurn(t *testing.T) {
	ev := func(seq int, b event.Body) event.Event {
		return event.Event{V: 1, Type: b.EventType(), Run: "run_s", Seq: int64(seq), Body: b}
	}
	task := func(id string) event.Body {
		return &event.ToolStart{CallID: id, Name: "Task", Kind: event.KindTask, Input: json.RawMessage(`{}`)}
	}
	end := func(id string) event.Body { return &event.ToolEnd{CallID: id, Name: "Task", Status: "ok", Output: id} }
	say := func(parent, text string) event.Body {
		return &event.Message{Role: "assistant", Text: text, ParentCallID: parent}
	}
	for name, bodies := range map[string][]event.Body{
		"in-turn": {task("a"), say("a", "a1"), say("a", "a2"), end("a"), task("b"), say("b", "b1"), end("b")},
		"at-once": {task("a"), task("b"), say("a", "a1"), say("b", "b1"), say("a", "a2"), end("a"), say("b", "b2"), end("b")},
		"nested":  {task("a"), say("a", "a1"), task("b"), say("b", "b1"), end("b"), say("a", "a2"), end("a")},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			evs := []event.Event{ev(1, &event.SessionStart{Agent: "claude"})}
			for _, b := range bodies {
				evs = append(evs, ev(len(evs)+1, b))
			}
			writeLog(t, dir, "run_s", evs)
			streamed, whole := exportBoth(t, dir, "run_s")
			require.Equal(t, whole, streamed)
			tr, err := atiftest.Validate([]byte(streamed))
			require.NoError(t, err)
			require.NoError(t, atif.Check(tr, evs))
			require.Len(t, tr.SubagentTrajectories, 2)
		})
	}
}

// TestWriteLogStreams: WriteLog writes what Export does, and a failed
// export leaves no file.
func TestWriteLogStreams(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, "run_x", readEvents(t, "../testdata/claude/subagent-maxturns.golden.ndjson"))
	path, err := atif.WriteLog(dir, "run_x", "")
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	streamed, whole := exportBoth(t, dir, "run_x")
	require.Equal(t, whole, string(data))
	require.Equal(t, streamed, string(data))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 3, "log, meta, trajectory: no temporary file left")
	require.Equal(t, filepath.Base(path), "run_x"+logger.ExtTrajectory)
}

// TestExportWriteFails: a failed write is Export's error, in the main
// agent's steps, a sub-agent's, or at the end.
func TestExportWriteFails(t *testing.T) {
	dir := t.TempDir()
	out := strings.Repeat("x", 70<<10) // over the output's buffer
	var evs []event.Event
	add := func(b event.Body) {
		evs = append(evs, event.Event{V: 1, Type: b.EventType(), Run: "run_x", Seq: int64(len(evs) + 1), Body: b})
	}
	for _, parent := range []string{"", "task"} {
		if parent != "" {
			add(&event.ToolStart{CallID: parent, Name: "Task", Kind: event.KindTask, Input: json.RawMessage(`{}`)})
		}
		for i := range 2 {
			id := fmt.Sprint(parent, "call_", i)
			add(&event.ToolStart{CallID: id, Name: "Bash", Kind: event.KindShell, Input: json.RawMessage(`{}`), ParentCallID: parent})
			add(&event.ToolEnd{CallID: id, Name: "Bash", Kind: event.KindShell, Status: "ok", Output: out})
		}
	}
	add(&event.ToolEnd{CallID: "task", Name: "Task", Kind: event.KindTask, Status: "ok"})
	writeLog(t, dir, "run_x", evs)
	streamed, whole := exportBoth(t, dir, "run_x")
	require.Equal(t, whole, streamed)
	for _, n := range []int{0, 100, len(streamed) / 4, len(streamed) * 3 / 4, len(streamed) - 100} {
		require.ErrorIs(t, atif.Export(dir, "run_x", "", &failWriter{n: n}), errFull, "after %d bytes", n)
	}
}

// failWriter fails every write after its first n bytes.
type failWriter struct{ n int }

var errFull = errors.New("disk full")

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errFull
	}
	w.n -= len(p)
	return len(p), nil
}
