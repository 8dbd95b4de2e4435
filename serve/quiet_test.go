package serve_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestQuietStreamAnswersAtOnce: the stream of a quiet live run (a tool
// call in progress, a session between turns) answers its status and
// headers at once, with nothing after the client's place to send. They
// were held until the first byte of the body: 15 s for SSE (the first
// keep-alive), and over NDJSON, which has none, until the run's next
// event, a client's request hanging unanswered meanwhile.
func TestQuietStreamAnswersAtOnce(t *testing.T) {
	f := newFixture(t, "serve-gated")
	run := f.start(t)
	var seen int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(f.dir, run+".ndjson"))
		if strings.Contains(string(b), `"type":"tool_start"`) {
			seen = strings.Count(string(b), "\n")
			break
		}
		require.True(t, time.Now().Before(deadline), "the run did not reach its tool call")
	}
	for _, accept := range []string{"text/event-stream", "application/x-ndjson"} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		req, err := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/api/runs/"+run+"/events", nil)
		require.NoError(t, err)
		req.Header.Set("Accept", accept)
		req.Header.Set("Last-Event-ID", strconv.Itoa(seen))
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err, "%s: the headers of a quiet stream", accept)
		require.Equal(t, http.StatusOK, res.StatusCode, accept)
		res.Body.Close()
		cancel()
	}
}

// TestHeadOfLiveStream: a HEAD of a live run's stream answers the
// stream's headers and ends. Its handler followed the run to its end,
// writing a body no one gets, so that the client's next request on
// that connection waited for the run's end too.
func TestHeadOfLiveStream(t *testing.T) {
	f := newFixture(t, "serve-gated")
	run := f.start(t)
	tr := &http.Transport{MaxConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 3 * time.Second}
	for _, req := range []struct{ method, path string }{
		{"HEAD", "/api/runs/" + run + "/events"},
		{"GET", "/api/runs/" + run},
	} {
		res, err := client.Do(mustRequest(t, req.method, f.http.URL+req.path))
		require.NoError(t, err, "%s %s", req.method, req.path)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s %s", req.method, req.path)
		res.Body.Close()
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	return req
}
