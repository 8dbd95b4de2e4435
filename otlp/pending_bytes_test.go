package otlp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestPendingBytesAreBounded: while the collector does not answer, the
// spans waiting to be sent hold at most maxPendingBytes, counted in
// bytes: the rest are dropped and warned of. The bound counted batches,
// 64 KiB each, so spans of MiBs (a library caller's) each passed as a
// batch of 64 KiB, and 40 spans of 2 MiB held 80 MiB.
func TestPendingBytesAreBounded(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	t.Cleanup(srv.Close)
	cfg, _, err := FromEnv(srv.URL, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = time.Hour // the requests wait for release, not for a deadline
	var warnings []string
	cfg.Warn = func(m string) { warnings = append(warnings, m) }
	x := New(cfg)
	var attrs []KeyValue
	for i := range 8 {
		attrs = append(attrs, Str(fmt.Sprint("big.", i), strings.Repeat("v", maxValueBytes)))
	}
	size := len(appendSpanMessage(nil, &Span{Attributes: attrs}))
	const spans = 40
	for range spans {
		x.Start("big", SpanContext{}, attrs...).End("")
	}
	x.mu.Lock()
	held := x.queued
	x.mu.Unlock()
	close(release)
	x.Shutdown(context.Background())
	if held*size > maxPendingBytes {
		t.Errorf("%d spans of %d KiB held (%d MiB), want at most %d MiB", held, size>>10, held*size>>20, maxPendingBytes>>20)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "dropped") {
		t.Errorf("warnings %q, want the drop's", warnings)
	}
}
