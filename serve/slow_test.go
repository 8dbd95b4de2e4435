package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/serve"
)

// stuckWriter is a client that takes no bytes until released.
type stuckWriter struct {
	hdr     http.Header
	release chan struct{}
	entered chan struct{} // closed at the first write
	once    sync.Once
	mu      sync.Mutex
	buf     bytes.Buffer
	status  int
}

func (w *stuckWriter) Header() http.Header { return w.hdr }
func (w *stuckWriter) WriteHeader(s int)   { w.status = s }
func (w *stuckWriter) Flush()              {}
func (w *stuckWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.entered) })
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func init() { fakeagent.Register("serve-gated-held", gatedHeld) }

// gatedHeld: the gated run, held once more after its lines, before its
// end, until the file $SERVE_TEST_GATE.held: a test sees it live with
// every line written.
func gatedHeld([]string) int {
	claudeInit()
	claudeTool("toolu_1", "ls -la")
	waitFile(os.Getenv("SERVE_TEST_GATE"))
	claudeToolResult("toolu_1", "total 0\n")
	n, _ := strconv.Atoi(os.Getenv("SERVE_TEST_LINES"))
	for i := range n {
		claudeText("msg_n"+strconv.Itoa(i), "more "+strconv.Itoa(i))
	}
	waitFile(os.Getenv("SERVE_TEST_GATE") + ".held")
	claudeResult("Done.")
	return 0
}

func waitFile(name string) {
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(name); err == nil {
			return
		}
	}
}

// TestSlowSubscriber: a client that stops reading neither holds up the
// run nor another client; when it reads again, far behind the run still
// live, it is told to reconnect, after the last event it got, and a
// reconnect from there gets the rest. An NDJSON client is told so by a
// last line that is no event: without it its stream closed as that of a
// run that ended without a result. (Once the run is over it is not told
// so: TestSlowClientOfFinishedRun.)
func TestSlowSubscriber(t *testing.T) {
	for _, format := range []string{"sse", "ndjson"} {
		t.Run(format, func(t *testing.T) { testSlowSubscriber(t, format == "ndjson") })
	}
}

func testSlowSubscriber(t *testing.T, ndjson bool) {
	var clock atomic.Int64 // the server's clock: moved on by hand
	clock.Store(time.Now().UnixNano())
	f := newFixtureWith(t, "serve-gated-held", func(c *serve.Config) {
		c.MaxLag, c.SlowAfter = 4, time.Minute
		c.Now = func() time.Time { return time.Unix(0, clock.Load()) }
	}, "SERVE_TEST_LINES=40")
	run := f.start(t)
	held := f.gate + ".held"
	t.Cleanup(func() { os.WriteFile(held, nil, 0o600) })

	// The fast client reads everything as it comes.
	fast := f.api.Events(t, context.Background(), run, nil)
	defer fast.Body.Close()
	var fastGot strings.Builder
	fastDone := make(chan struct{})
	fastHasAll := make(chan struct{}) // every line before the held end
	go func() {
		defer close(fastDone)
		readSSE(t, fast.Body, func(m sse) bool {
			if m.event == "" {
				fastGot.WriteString(m.data + "\n")
			}
			if strings.Contains(m.data, `"text":"more 39"`) {
				close(fastHasAll)
			}
			return m.event != "end"
		})
	}()

	slow := &stuckWriter{hdr: http.Header{}, release: make(chan struct{}), entered: make(chan struct{})}
	req := httptest.NewRequest("GET", "/api/runs/"+run+"/events", nil)
	req.Host = "127.0.0.1"
	if ndjson {
		req.Header.Set("Accept", "application/x-ndjson")
	}
	handled := make(chan struct{})
	go func() { f.srv.ServeHTTP(slow, req); close(handled) }()

	// The slow client is stuck on its first write; the run goes on
	// regardless.
	<-slow.entered
	f.openGate(t)
	<-fastHasAll

	clock.Add(int64(2 * time.Minute)) // the slow client has not caught up for 2 minutes
	close(slow.release)
	select {
	case <-handled:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow client's stream did not end")
	}
	require.NoError(t, os.WriteFile(held, nil, 0o600)) // the run ends
	m := waitStatus(t, f, run)
	require.Equal(t, "success", m["status"])
	<-fastDone
	log := f.logOf(t, run)
	require.Equal(t, log, fastGot.String(), "the fast client got every event")
	out := slow.buf.String()
	var got strings.Builder
	last := ""
	if ndjson {
		got.WriteString(slowNDJSON(t, out, &last))
	} else {
		i := strings.LastIndex(out, "event: reconnect\n")
		require.GreaterOrEqual(t, i, 0, "the slow client is told to reconnect:\n%s", out)
		readSSE(t, strings.NewReader(out), func(m sse) bool {
			if m.event == "" {
				got.WriteString(m.data + "\n")
				last = m.id
			}
			return true
		})
		require.Contains(t, out, `"last_event_id":`+last+`}`)
	}
	require.NotEqual(t, log, got.String(), "the slow client was cut short")

	if ndjson {
		res := f.api.Do(t, context.Background(), "GET", "/api/runs/"+run+"/events?after="+last, "", map[string]string{"Accept": "application/x-ndjson"})
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		got.Write(b)
		require.Equal(t, log, got.String())
		return
	}
	res := f.api.Events(t, context.Background(), run, map[string]string{"Last-Event-ID": last})
	defer res.Body.Close()
	readSSE(t, res.Body, func(m sse) bool {
		if m.event == "" {
			got.WriteString(m.data + "\n")
		}
		return m.event != "end"
	})
	require.Equal(t, log, got.String())
}

// slowNDJSON checks the NDJSON stream of a dropped client: events, then
// one reconnect line naming the last of them (last). It returns the events.
func slowNDJSON(t *testing.T, out string, last *string) string {
	t.Helper()
	require.True(t, strings.HasSuffix(out, "\n"), "%s", out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var end struct {
		Reconnect *struct {
			Reason      string `json:"reason"`
			LastEventID *int64 `json:"last_event_id"`
		} `json:"reconnect"`
	}
	tail := lines[len(lines)-1]
	require.NoError(t, json.Unmarshal([]byte(tail), &end), "%s", out)
	require.NotNil(t, end.Reconnect, "the slow client is told to reconnect:\n%s", out)
	require.Equal(t, "slow_client", end.Reconnect.Reason)
	events := lines[:len(lines)-1]
	require.NotEmpty(t, events)
	*last = strconv.FormatInt(seqOf(t, events[len(events)-1]), 10)
	require.Equal(t, *last, strconv.FormatInt(*end.Reconnect.LastEventID, 10))
	return strings.Join(events, "\n") + "\n"
}
