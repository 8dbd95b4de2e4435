package otlp

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentharness/harness/internal/otlptest"
)

// TestRedirectNotFollowed: a collector that answers with a redirect gets
// a warning saying so, and the place it points to gets
// nothing: not the user's OTEL_EXPORTER_OTLP_HEADERS (an API key), which
// a 307 took there, nor an empty GET that a 302 made of the POST (all the
// telemetry lost, and its 200 taken for success, without a word).
func TestRedirectNotFollowed(t *testing.T) {
	evs := otlptest.ReadEvents(t, "../testdata/claude/tool.golden.ndjson")
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusFound, http.StatusMovedPermanently} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			var reached atomic.Int32
			elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reached.Add(1)
			}))
			defer elsewhere.Close()
			collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, elsewhere.URL+r.URL.Path, code)
			}))
			defer collector.Close()
			cfg, _, err := FromEnv(collector.URL, func(k string) string {
				return map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=" + secret}[k]
			})
			if err != nil {
				t.Fatal(err)
			}
			warnings := exportRun(cfg, evs, 1)
			if n := reached.Load(); n != 0 {
				t.Errorf("the redirect was followed: %d requests reached its target", n)
			}
			if len(warnings) == 0 {
				t.Fatal("no warning")
			}
			for _, w := range warnings {
				if !strings.Contains(w, strconv.Itoa(code)) || !strings.Contains(w, "follows no redirect") {
					t.Errorf("warning %q", w)
				}
			}
		})
	}
}
