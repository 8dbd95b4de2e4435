// Package otlptest has the OTLP endpoints the tests of the export send
// to: a receiver on 127.0.0.1 that decodes with the collector's own pdata,
// and collectors that fail.
package otlptest

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
)

// Receiver is an OTLP/HTTP endpoint (URL) that keeps what it is sent.
type Receiver struct {
	URL        string
	mu         sync.Mutex
	fail       []int // the statuses of the next requests, refused
	retryAfter string
	requests   int
	bodies     [][]byte
	spans      []ptrace.Span
	metrics    []pmetricotlp.ExportRequest
	arrived    chan struct{} // a token a request taken, for Wait
}

// NewReceiver starts a receiver for the test's lifetime; a request it
// cannot decode fails t.
func NewReceiver(t *testing.T) *Receiver {
	rc := &Receiver{arrived: make(chan struct{}, 1024)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if ct := r.Header.Get("Content-Type"); ct != "application/x-protobuf" {
			t.Errorf("Content-Type %q", ct)
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.requests++
		if len(rc.fail) > 0 {
			if rc.retryAfter != "" {
				w.Header().Set("Retry-After", rc.retryAfter)
			}
			w.WriteHeader(rc.fail[0])
			rc.fail = rc.fail[1:]
			return
		}
		rc.bodies = append(rc.bodies, body)
		var err error
		switch r.URL.Path {
		case "/v1/traces":
			req := ptraceotlp.NewExportRequest()
			err = req.UnmarshalProto(body)
			rc.spans = append(rc.spans, Spans(req.Traces())...)
		case "/v1/metrics":
			req := pmetricotlp.NewExportRequest()
			err = req.UnmarshalProto(body)
			rc.metrics = append(rc.metrics, req)
		default:
			t.Errorf("path %s", r.URL.Path)
		}
		if err != nil {
			t.Errorf("%s: %v", r.URL.Path, err)
			w.WriteHeader(http.StatusBadRequest)
		}
		select {
		case rc.arrived <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(srv.Close)
	rc.URL = srv.URL
	return rc
}

// FailFirst makes the receiver refuse its next requests, one a status,
// with a Retry-After header when retryAfter is not "": a collector that
// is busy (429, 503) or refuses (400).
func (rc *Receiver) FailFirst(retryAfter string, statuses ...int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.fail, rc.retryAfter = statuses, retryAfter
}

// Wait waits for n more requests to be taken (refused ones are not
// counted), and fails t if they are not within a minute.
func (rc *Receiver) Wait(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(time.Minute)
	for range n {
		select {
		case <-rc.arrived:
		case <-timeout:
			t.Fatalf("the requests did not arrive")
		}
	}
}

// Requests counts the requests received, refused ones included.
func (rc *Receiver) Requests() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.requests
}

// Spans returns every span of td.
func Spans(td ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			spans := sss.At(j).Spans()
			for k := range spans.Len() {
				out = append(out, spans.At(k))
			}
		}
	}
	return out
}

// Got returns the request bodies, spans and metrics requests received.
func (rc *Receiver) Got() ([][]byte, []ptrace.Span, []pmetricotlp.ExportRequest) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.bodies, rc.spans, rc.metrics
}

// Faults are collectors that fail, by name: "down" (nothing listens),
// "500" (every request fails), "hung" (no request is ever answered, until
// the test ends).
func Faults(t *testing.T) map[string]string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()
	fail := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() {
		close(release)
		hung.Close()
		fail.Close()
	})
	return map[string]string{"down": down, "500": fail.URL, "hung": hung.URL}
}

// Traceparents is a Settings.Telemetry hook that keeps the traceparent
// each run was started with, and nothing else.
type Traceparents struct {
	mu  sync.Mutex
	got []string
}

// Hook is the Settings.Telemetry to set.
func (tp *Traceparents) Hook(ctx context.Context, _ harness.RunInfo) (harness.Observer, []string) {
	tp.mu.Lock()
	tp.got = append(tp.got, harness.Traceparent(ctx))
	tp.mu.Unlock()
	return harness.Observer{}, nil
}

// Got returns the traceparents of the runs started so far.
func (tp *Traceparents) Got() []string {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.got
}

// ReadEvents reads a stream file (a golden, a session log's events).
func ReadEvents(t *testing.T, path string) []event.Event {
	t.Helper()
	b, err := os.ReadFile(path)
	if err == nil {
		var evs []event.Event
		if evs, err = event.ReadAll(bytes.NewReader(b)); err == nil {
			return evs
		}
	}
	t.Fatal(err)
	return nil
}
