package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/logger"
)

// writeBigRun writes run id to dir: a meta saying status (with an end
// unless running) and an event log of about size bytes: three shell tool
// calls (one failed) and a warning, then messages, ending with a result
// when withResult. It returns the log's size.
func writeBigRun(t *testing.T, dir, id, status string, size int, withResult bool) int64 {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	end := `,"end":"` + start.Add(time.Minute).Format(time.RFC3339) + `"`
	if status == logger.StatusRunning {
		end = ""
	}
	meta := fmt.Sprintf(`{"run":%q,"agent":"claude","model":"sonnet","cwd":"/work","start":%q%s,"status":%q}`,
		id, start.Format(time.RFC3339), end, status)
	require.NoError(t, os.WriteFile(logger.Path(dir, id, logger.ExtMeta), []byte(meta), 0o600))

	f, err := os.OpenFile(logger.Path(dir, id, logger.ExtEvents), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	seq, ts, written := int64(0), start.UnixMilli(), 0
	line := func(typ, body string) {
		seq++
		n, _ := fmt.Fprintf(w, `{"v":1,"type":%q,"run":%q,"seq":%d,"ts":%d,%s}`+"\n", typ, id, seq, ts, body)
		written += n
	}
	line("session_start", `"agent":"claude","model":"opus","cwd":"/w","pty":false,"argv":[]`)
	for i := 0; ; i++ {
		if i == 1 || i == 3 || i == 5 {
			status := "ok"
			if i == 1 {
				status = "error"
			}
			call := `"call_id":"c` + strconv.Itoa(i) + `","name":"Bash","kind":"shell"`
			line("tool_start", call+`,"input":{},"command":"ls"`)
			line("tool_end", call+`,"status":"`+status+`","output":"x","duration_ms":1`)
			continue
		}
		if i == 2 {
			line("warning", `"code":"stall","message":"quiet"`)
			continue
		}
		line("message", `"role":"assistant","text":"line `+strconv.Itoa(i)+` of the flood","message_id":"msg_`+strconv.Itoa(i)+`"`)
		if written >= size {
			break
		}
	}
	line("usage", `"input_tokens":240,"output_tokens":50`)
	if withResult {
		line("result", `"status":"success","text":"done","duration_ms":308,"num_turns":1,"usage":{"input_tokens":240,"output_tokens":50,"cost_usd":0.5},"cost_usd":0.5,"exit_code":0,"stats":{"native_lines":9,"unparsed_lines":0,"events":`+strconv.FormatInt(seq+1, 10)+`,"tool_calls":3}`)
	}
	require.NoError(t, w.Flush())
	fi, err := f.Stat()
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return fi.Size()
}

// bytesRead is how many bytes this process has read (/proc/self/io's
// rchar: every read and pread of every thread).
func bytesRead(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skip("no /proc/self/io:", err)
	}
	for _, l := range bytes.Split(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte("rchar: ")); ok {
			n, err := strconv.ParseInt(string(v), 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Skip("no rchar in /proc/self/io")
	return 0
}

func getJSON(t *testing.T, s *Server, path string) map[string]any {
	t.Helper()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1"+path, nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var m map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &m))
	return m
}

// TestListBigLog: the first GET /api/runs after a start read the whole log
// of every run (a 540 MB one: 13 s, 350 MB of memory). A finished run's
// log over wholeScanMax is now read at its ends: the listing reads a
// bound of bytes whatever the log's size, and its figures are the
// result's. Not parallel: it counts the bytes this process reads.
func TestListBigLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	const id = "run_01BIGLOG0000000000000000"
	size := writeBigRun(t, dir, id, "success", 24<<20, true)
	// What the ends may cost at most: a line as long as the stream allows
	// at each end, and the meta.
	bound := int64(2*(event.MaxLineBytes+2) + 64<<10)
	require.Greater(t, size, 8*bound)

	s := New(Config{Dir: dir, Open: true})
	before := bytesRead(t)
	runs := getJSON(t, s, "/api/runs")["runs"].([]any)
	read := bytesRead(t) - before
	require.Less(t, read, bound, "the listing read %d bytes of a %d-byte log", read, size)

	require.Len(t, runs, 1)
	r := runs[0].(map[string]any)
	require.Equal(t, id, r["run"])
	require.Equal(t, "success", r["status"])
	require.Equal(t, "opus", r["model"], "the session_start's")
	require.Equal(t, "/work", r["cwd"], "the meta's")
	require.EqualValues(t, 3, r["tool_calls"], "the result's stats.tool_calls")
	require.Nil(t, r["tools_by_kind"], "not counted")
	require.Equal(t, true, r["tally_from_result"])
	require.EqualValues(t, 240, r["usage"].(map[string]any)["input_tokens"])
	require.InDelta(t, 0.5, r["cost_usd"], 1e-9)
	require.EqualValues(t, 308, r["duration_ms"])
	require.EqualValues(t, 0, r["exit_code"])
	require.Equal(t, "done", r["result"])

	// The figures both have are the whole log's.
	var whole scan
	tl, err := logger.OpenTail(dir, id)
	require.NoError(t, err)
	defer tl.Close()
	for {
		l, err := tl.Next()
		if err != nil {
			break
		}
		whole.add(l)
	}
	ends := s.summary.get(id)
	require.True(t, ends.ends)
	require.Equal(t, tl.Offset(), ends.offset)
	w, e := whole.tally, ends.tally
	require.Equal(t, []any{w.Events, w.LastTS, w.Agent, w.Model, w.Cwd, w.Usage, w.ToolCalls, w.Status, w.DurationMS, *w.ExitCode, w.Signal, whole.result},
		[]any{e.Events, e.LastTS, e.Agent, e.Model, e.Cwd, e.Usage, e.ToolCalls, e.Status, e.DurationMS, *e.ExitCode, e.Signal, ends.result})
	wc, _ := w.Cost()
	ec, _ := e.Cost()
	require.Equal(t, *wc, *ec)
	require.Equal(t, map[string]int{"shell": 3}, w.ToolsByKind, "what the ends do not tell")
}

// TestListBigLogWithoutResult: a big log that does not end with its
// result (a run still running, or cut) is read whole, as before: its
// figures are the lines'.
func TestListBigLogWithoutResult(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions")
	const id = "run_01BIGRUNNING0000000000000"
	writeBigRun(t, dir, id, logger.StatusRunning, 2*wholeScanMax, false)
	s := New(Config{Dir: dir, Open: true})
	r := getJSON(t, s, "/api/runs/"+id)
	require.Equal(t, "running", r["status"])
	require.EqualValues(t, 3, r["tool_calls"])
	require.Equal(t, map[string]any{"shell": float64(3)}, r["tools_by_kind"])
	require.EqualValues(t, 1, r["tools_failed"])
	require.EqualValues(t, 1, r["warnings"])
	require.Nil(t, r["tally_from_result"])
}
