package serve

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/logger"
)

func appendLog(t *testing.T, dir, id, data string) {
	t.Helper()
	f, err := os.OpenFile(logger.Path(dir, id, logger.ExtEvents), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(data)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func boundsLine(id string, seq int, typ, body string) string {
	return `{"v":1,"type":"` + typ + `","run":"` + id + `","seq":` + strconv.Itoa(seq) + `,"ts":1` + body + "}\n"
}

// TestListReadsEachByteOnce: the list read a log from the end of its last
// complete line at every call, so a log whose tail has no newline was
// read again each time (a lost run's 300 MB of zeros: 0.5-1 s and 1.4 GB
// a listing). A line over the cap is now dropped as it is read and never
// read again, and an unfinished line is read again only once the log
// grew. Not parallel: it counts the bytes this process reads.
func TestListReadsEachByteOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	const id = "run_01UNFINISHED0000000000000"
	meta := `{"run":"` + id + `","agent":"claude","start":"2026-11-01T00:00:00Z","status":"running"}`
	require.NoError(t, os.WriteFile(logger.Path(dir, id, logger.ExtMeta), []byte(meta), 0o600))
	appendLog(t, dir, id, boundsLine(id, 1, "session_start", `,"agent":"claude","cwd":"/w","pty":false,"argv":[]`))
	const junk = 3 * event.MaxLineBytes
	appendLog(t, dir, id, strings.Repeat("x", junk))

	s := New(Config{Dir: dir, Open: true})
	list := func() (map[string]any, int64) {
		t.Helper()
		before := bytesRead(t)
		runs := getJSON(t, s, "/api/runs")["runs"].([]any)
		read := bytesRead(t) - before
		require.Len(t, runs, 1)
		return runs[0].(map[string]any), read
	}
	const small = 256 << 10 // the meta, the log's ends (settle), the directory
	r, read := list()
	require.EqualValues(t, 1, r["events"])
	require.GreaterOrEqual(t, read, int64(junk))
	r, read = list()
	require.EqualValues(t, 1, r["events"])
	require.Less(t, read, int64(small), "the unchanged log was read again")

	// The long line grows: only what it gained is read.
	appendLog(t, dir, id, strings.Repeat("x", event.MaxLineBytes))
	_, read = list()
	require.Less(t, read, int64(event.MaxLineBytes+small))
	// It ends, and lines follow: the dropped one is no event.
	appendLog(t, dir, id, "x\n"+boundsLine(id, 2, "message", `,"role":"assistant","text":"hi"`))
	r, read = list()
	require.EqualValues(t, 2, r["events"])
	require.Less(t, read, int64(small))

	// An unfinished line under the cap is read again only once it grew.
	appendLog(t, dir, id, strings.Repeat("w", event.MaxLineBytes/2))
	_, read = list()
	require.GreaterOrEqual(t, read, int64(event.MaxLineBytes/2))
	_, read = list()
	require.Less(t, read, int64(small), "the unchanged unfinished line was read again")
	appendLog(t, dir, id, "\n"+boundsLine(id, 3, "tool_start", `,"call_id":"c","name":"Bash","kind":"shell","input":{}`))
	r, _ = list()
	require.EqualValues(t, 3, r["events"])
	require.EqualValues(t, 1, r["tool_calls"])
}

// TestListBigMetaNotRead: a meta of 3 GB made every listing time out and
// serve's memory reach 13.7 GB; one over the cap is now a malformed meta
// (status unknown), not read, by the list and by GET /api/runs/{run}.
// Not parallel: it counts the bytes this process reads.
func TestListBigMetaNotRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	const id = "run_01ZZHUGEMETA00000000000000"
	f, err := os.Create(logger.Path(dir, id, logger.ExtMeta))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(64<<20)) // sparse
	require.NoError(t, f.Close())
	appendLog(t, dir, id, boundsLine(id, 1, "session_start", `,"agent":"claude","cwd":"/w","pty":false,"argv":[]`))

	s := New(Config{Dir: dir, Open: true})
	for _, path := range []string{"/api/runs", "/api/runs", "/api/runs/" + id} {
		before := bytesRead(t)
		body := getJSON(t, s, path)
		read := bytesRead(t) - before
		require.Less(t, read, int64(1<<20), "GET %s read %d bytes", path, read)
		r := body
		if runs, ok := body["runs"].([]any); ok {
			require.Len(t, runs, 1)
			r = runs[0].(map[string]any)
		}
		require.Equal(t, id, r["run"])
		require.Equal(t, "unknown", r["status"])
		require.Equal(t, "claude", r["agent"], "the log's")
	}
}

// TestEventsDropOverlongLine: a log line longer than the stream allows was
// held whole by each client's reader, however long (200 MB without a
// newline: 400 MB a client), and sent; it is now dropped as it is read,
// and every other line is sent exactly.
func TestEventsDropOverlongLine(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	const id = "run_01LONGLINE00000000000000"
	meta := `{"run":"` + id + `","agent":"claude","start":"2026-11-01T00:00:00Z","status":"success"}`
	require.NoError(t, os.WriteFile(logger.Path(dir, id, logger.ExtMeta), []byte(meta), 0o600))
	lines := []string{
		boundsLine(id, 1, "session_start", `,"agent":"claude","cwd":"/w","pty":false,"argv":[]`),
		boundsLine(id, 2, "message", `,"role":"assistant","text":"before"`),
		boundsLine(id, 3, "message", `,"role":"assistant","text":"after"`),
		boundsLine(id, 4, "result", `,"status":"success","text":"done","duration_ms":1,"usage":{},"stats":{"native_lines":0,"unparsed_lines":0,"events":4,"tool_calls":0}`),
	}
	long := `{"v":1,"type":"message","run":"` + id + `","seq":9,"text":"` + strings.Repeat("y", 2*event.MaxLineBytes) + "\"}\n"
	appendLog(t, dir, id, lines[0]+lines[1]+long+lines[2]+lines[3])

	s := New(Config{Dir: dir, Open: true})
	for _, ndjson := range []bool{true, false} {
		req := httptest.NewRequest("GET", "http://127.0.0.1/api/runs/"+id+"/events", nil)
		if ndjson {
			req.Header.Set("Accept", "application/x-ndjson")
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code)
		want := strings.Join(lines, "")
		if !ndjson {
			var b strings.Builder
			for i, l := range lines {
				b.WriteString("id: " + strconv.Itoa(i+1) + "\ndata: " + strings.TrimSuffix(l, "\n") + "\n\n")
			}
			want = b.String() + "event: end\ndata: {\"last_event_id\":4}\n\n"
		}
		require.False(t, strings.Contains(rec.Body.String(), "yyyy"), "the long line was sent")
		require.Equal(t, want, rec.Body.String(), "ndjson %v", ndjson)
	}
}
