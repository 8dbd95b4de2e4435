package serve_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// TestEventsResume disconnects mid-run and reconnects with Last-Event-ID:
// what the two connections delivered, concatenated, is the session log,
// byte for byte, and the second ends with the end event.
func TestEventsResume(t *testing.T) {
	f := newFixture(t, "serve-gated")
	run := f.start(t)

	ctx, cancel := context.WithCancel(context.Background())
	res := f.api.Events(t, ctx, run, nil)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	var got strings.Builder
	last := ""
	readSSE(t, res.Body, func(m sse) bool {
		require.Empty(t, m.event, "no end before the run ends")
		got.WriteString(m.data + "\n")
		last = m.id
		return !strings.Contains(m.data, `"type":"tool_start"`)
	})
	cancel() // the client goes away while the tool call is open
	res.Body.Close()
	require.NotEmpty(t, last)

	f.openGate(t)
	res = f.api.Events(t, context.Background(), run, map[string]string{"Last-Event-ID": last})
	defer res.Body.Close()
	ended := false
	readSSE(t, res.Body, func(m sse) bool {
		if m.event == "end" {
			ended = true
			require.JSONEq(t, `{"last_event_id":`+strconv.Itoa(countLines(got.String()))+`}`, m.data)
			return false
		}
		require.Equal(t, m.id, strconv.FormatInt(seqOf(t, m.data), 10), "id is the event's seq")
		got.WriteString(m.data + "\n")
		return true
	})
	require.True(t, ended, "the stream ends after the result")
	log := f.logOf(t, run)
	require.Equal(t, log, got.String())
	require.Contains(t, log, `"type":"result"`)
	require.NoError(t, event.CheckNDJSON([]byte(log)))
}

func countLines(s string) int { return strings.Count(s, "\n") }

func seqOf(t *testing.T, line string) int64 {
	t.Helper()
	var e struct{ Seq int64 }
	require.NoError(t, json.Unmarshal([]byte(line), &e))
	return e.Seq
}

// TestEventsAfterEnd: a client that connects after the run ended gets the
// whole stream and the end, as SSE (also with ?after=0) and as NDJSON.
func TestEventsAfterEnd(t *testing.T) {
	f := newFixture(t, "serve-gated")
	f.openGate(t)
	run := f.start(t)
	waitStatus(t, f, run)
	log := f.logOf(t, run)

	for _, hdr := range []map[string]string{nil, {"Last-Event-ID": "0"}} {
		res := f.api.Events(t, context.Background(), run, hdr)
		var got strings.Builder
		ended := false
		readSSE(t, res.Body, func(m sse) bool {
			if m.event == "end" {
				ended = true
				return true
			}
			got.WriteString(m.data + "\n")
			return true
		})
		res.Body.Close()
		require.True(t, ended)
		require.Equal(t, log, got.String())
	}

	res := f.api.Events(t, context.Background(), run, map[string]string{"Accept": "application/x-ndjson"})
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, "application/x-ndjson", res.Header.Get("Content-Type"))
	require.Equal(t, log, string(b))

	// After the result: nothing more, and the end.
	n := strings.Count(log, "\n")
	res = f.api.Events(t, context.Background(), run+"", map[string]string{"Last-Event-ID": strconv.Itoa(n)})
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, "event: end\ndata: {\"last_event_id\":"+strconv.Itoa(n)+"}\n\n", string(b))
}

// waitStatus waits until the run's summary says it ended, and returns it.
func waitStatus(t *testing.T, f *fixture, run string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		m := f.api.JSON(t, "/api/runs/"+run, http.StatusOK)
		if m["status"] != "running" && m["live"] == nil {
			return m
		}
	}
	t.Fatal("the run did not end")
	return nil
}

// TestRunSummary: the list and the summary carry the figures of the
// stream, and the filters select.
func TestRunSummary(t *testing.T) {
	f := newFixture(t, "serve-gated")
	f.openGate(t)
	run := f.start(t)
	m := waitStatus(t, f, run)
	require.Equal(t, "success", m["status"])
	require.Equal(t, "claude", m["agent"])
	require.EqualValues(t, 1, m["tool_calls"])
	require.Equal(t, map[string]any{"shell": float64(1)}, m["tools_by_kind"])
	require.EqualValues(t, 200, m["usage"].(map[string]any)["input_tokens"])
	require.InDelta(t, 0.0021, m["cost_usd"], 1e-9)
	require.Equal(t, "The tree is empty. Done.", m["result"])

	list := f.api.JSON(t, "/api/runs", http.StatusOK)["runs"].([]any)
	require.Len(t, list, 1)
	require.Equal(t, run, list[0].(map[string]any)["run"])
	for q, n := range map[string]int{"agent=claude": 1, "agent=codex": 0, "status=success": 1, "status=running": 0, "since=1h": 1,
		"since=" + time.Now().Add(time.Hour).UTC().Format(time.RFC3339): 0} {
		require.Len(t, f.api.JSON(t, "/api/runs?"+q, http.StatusOK)["runs"], n, q)
	}
	f.api.JSON(t, "/api/runs?since=yesterday", http.StatusBadRequest)
	require.Equal(t, run, f.api.JSON(t, "/api/runs/latest", http.StatusOK)["run"])
}

// TestBadInput: unknown runs, bad cursors and missing tokens are one JSON
// error each, with the right status.
func TestBadInput(t *testing.T) {
	f := newFixture(t, "serve-gated")
	f.openGate(t)
	run := f.start(t)
	waitStatus(t, f, run)
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "run_metaonly.meta.json"), []byte(`{"run":"run_metaonly","agent":"claude"}`), 0o600))
	for name, tc := range map[string]struct {
		method, path, body string
		hdr                map[string]string
		status             int
		msg                string
	}{
		"unknown-run":          {"GET", "/api/runs/run_nope", "", nil, 404, "no such run"},
		"unknown-run-events":   {"GET", "/api/runs/run_nope/events", "", nil, 404, "no such run"},
		"unknown-run-cancel":   {"POST", "/api/runs/run_nope/cancel", "", f.api.Auth(), 404, "no such run"},
		"bad-last-event-id":    {"GET", "/api/runs/" + run + "/events", "", map[string]string{"Last-Event-ID": "seven"}, 400, "Last-Event-ID"},
		"negative-after":       {"GET", "/api/runs/" + run + "/events?after=-1", "", nil, 400, "after"},
		"no-token":             {"POST", "/api/runs", `{"agent":"claude","prompt":"x"}`, nil, 401, "token"},
		"wrong-token":          {"POST", "/api/runs", `{"agent":"claude","prompt":"x"}`, map[string]string{"Authorization": "Bearer wrong"}, 401, "token"},
		"token-in-query-post":  {"POST", "/api/runs?token=" + f.api.Token, `{"agent":"claude","prompt":"x"}`, nil, 401, "token"},
		"no-prompt":            {"POST", "/api/runs", `{"agent":"claude"}`, f.api.Auth(), 400, "prompt"},
		"unknown-agent":        {"POST", "/api/runs", `{"agent":"nope","prompt":"x"}`, f.api.Auth(), 400, "nope"},
		"unknown-field":        {"POST", "/api/runs", `{"agent":"claude","prompt":"x","binary":"/bin/sh"}`, f.api.Auth(), 400, "binary"},
		"bad-budget":           {"POST", "/api/runs", `{"agent":"claude","prompt":"x","budgets":{"idle":"soon"}}`, f.api.Auth(), 400, "budgets.idle"},
		"bad-mock":             {"POST", "/api/runs", `{"agent":"claude","prompt":"x","mock":"nope"}`, f.api.Auth(), 400, "scenario"},
		"cancel-finished":      {"POST", "/api/runs/" + run + "/cancel", "", f.api.Auth(), 409, "not running"},
		"unknown-bench":        {"GET", "/api/bench/nope", "", nil, 404, "no such bench report"},
		"bench-path-traversal": {"GET", "/api/bench/..%2fsessions", "", nil, 404, "no such bench report"},
		"unknown-endpoint":     {"GET", "/api/nope", "", nil, 404, "no such endpoint"},
		"no-event-log":         {"GET", "/api/runs/run_metaonly/events", "", nil, 404, "no event log"},
		"rebinding-host":       {"GET", "/api/runs", "", map[string]string{"Host": "evil.example:80"}, 401, "token"},
	} {
		t.Run(name, func(t *testing.T) {
			res := f.api.Do(t, t.Context(), tc.method, tc.path, tc.body, tc.hdr)
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			require.Equal(t, tc.status, res.StatusCode, "%s", b)
			var e struct{ Error string }
			require.NoError(t, json.Unmarshal(b, &e), "%s", b)
			require.Contains(t, e.Error, tc.msg)
		})
	}
}

// TestCancel: a run started through the API stops on cancel, and its
// stream says so.
func TestCancel(t *testing.T) {
	f := newFixture(t, "serve-gated")
	run := f.start(t)
	res := f.api.Events(t, context.Background(), run, nil)
	defer res.Body.Close()
	var result string
	cancelled := false
	readSSE(t, res.Body, func(m sse) bool {
		if !cancelled && strings.Contains(m.data, `"type":"tool_start"`) {
			cancelled = true
			r := f.api.Do(t, t.Context(), "POST", "/api/runs/"+run+"/cancel", "", f.api.Auth())
			r.Body.Close()
			require.Equal(t, http.StatusAccepted, r.StatusCode, "%s", f.logOf(t, run))
		}
		if strings.Contains(m.data, `"type":"result"`) {
			result = m.data
		}
		return m.event != "end"
	})
	require.Contains(t, result, `"status":"cancelled"`)
}

// TestBenchReports: stored reports are listed and served with a Wilson
// interval per group.
func TestBenchReports(t *testing.T) {
	f := newFixture(t, "serve-gated")
	writeReport(t, f.bench, "b1")
	list := f.api.JSON(t, "/api/bench", http.StatusOK)["reports"].([]any)
	require.Len(t, list, 1)
	require.Equal(t, []any{"claude", "codex"}, list[0].(map[string]any)["agents"])
	d := f.api.JSON(t, "/api/bench/b1", http.StatusOK)
	iv := d["intervals"].([]any)
	require.Len(t, iv, 2)
	c := iv[0].(map[string]any)
	require.Equal(t, "check", c["basis"])
	require.EqualValues(t, 2, c["k"])
	require.EqualValues(t, 3, c["n"])
	// 2 of 3: Wilson 95 % is [0.2077, 0.9385].
	require.InDelta(t, 0.2077, c["lo"], 1e-4)
	require.InDelta(t, 0.9385, c["hi"], 1e-4)
	require.NotNil(t, d["report"])
}

// writeReport stores a bench report of two agents on two tasks.
func writeReport(t *testing.T, dir, id string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	b, err := os.ReadFile(filepath.Join("testdata", "report.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, id+".json"), b, 0o600))
}
