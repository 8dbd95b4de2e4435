package otlp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/urlmask"
)

// Config is where and how an Exporter sends.
type Config struct {
	// TracesURL and MetricsURL are the OTLP/HTTP endpoints (…/v1/traces,
	// …/v1/metrics); an empty one is not sent to.
	TracesURL, MetricsURL string
	// Headers go on every request (OTEL_EXPORTER_OTLP_HEADERS).
	Headers map[string]string
	// Resource describes the process: service.name and the rest.
	Resource []KeyValue
	// Content puts tool arguments, output, diffs and the final answer on
	// the spans, redacted as session logs are (--otlp-content).
	Content bool
	// Timeout bounds each request and the flush at Shutdown.
	Timeout time.Duration
	// Warn is told of the first failure to export, once: the run goes on.
	Warn func(msg string)
	// Version is harness's, the instrumentation scope's version.
	Version string
	// Client sends the requests; http.DefaultClient's transport when nil.
	Client *http.Client
}

// DefaultTimeout bounds a request, and the flush at exit, when
// OTEL_EXPORTER_OTLP_TIMEOUT does not say.
const DefaultTimeout = 5 * time.Second

// maxPending and maxPendingBytes bound the spans waiting to be sent
// (encoded, counted in bytes: a library caller's span may be far larger
// than a batch): past them, spans are dropped (and the drop is warned
// of) rather than held.
const (
	maxPending      = 8192
	maxPendingBytes = 32 << 20
)

// FromEnv is the configuration for endpoint (the --otlp flag or the
// config key; "" for none) and the standard variables:
// OTEL_EXPORTER_OTLP_ENDPOINT (a base URL, when endpoint is ""),
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and _METRICS_ENDPOINT (whole URLs),
// OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT (ms),
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES. ok is false when no
// endpoint is set at all: telemetry is off.
func FromEnv(endpoint string, getenv func(string) string) (cfg Config, ok bool, err error) {
	if endpoint == "" {
		endpoint = getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	traces, metrics := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
	if endpoint == "" && traces == "" && metrics == "" {
		return Config{}, false, nil
	}
	if endpoint != "" {
		base, err := baseURL(endpoint)
		if err != nil {
			return Config{}, false, err
		}
		if strings.ContainsAny(base, "?#") {
			// The signal's path would land inside the query: sent to
			// the wrong place, with the key mangled.
			return Config{}, false, fmt.Errorf("otlp endpoint %q: a base endpoint takes no query or fragment (the /v1/traces path goes after it): give a key in OTEL_EXPORTER_OTLP_HEADERS, or whole URLs in OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and _METRICS_ENDPOINT", urlmask.Mask(base))
		}
		if traces == "" {
			traces = base + "/v1/traces"
		}
		if metrics == "" {
			metrics = base + "/v1/metrics"
		}
	}
	for _, u := range []string{traces, metrics} {
		if u == "" {
			continue
		}
		if _, err := baseURL(u); err != nil {
			return Config{}, false, err
		}
	}
	// OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER=none turn a signal off
	// (Jaeger takes traces only).
	if getenv("OTEL_TRACES_EXPORTER") == "none" {
		traces = ""
	}
	if getenv("OTEL_METRICS_EXPORTER") == "none" {
		metrics = ""
	}
	cfg = Config{TracesURL: traces, MetricsURL: metrics, Timeout: DefaultTimeout}
	if cfg.Headers, err = pairs(getenv("OTEL_EXPORTER_OTLP_HEADERS"), "OTEL_EXPORTER_OTLP_HEADERS", true); err != nil {
		return Config{}, false, err
	}
	if t := getenv("OTEL_EXPORTER_OTLP_TIMEOUT"); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil || n <= 0 {
			return Config{}, false, fmt.Errorf("OTEL_EXPORTER_OTLP_TIMEOUT %q: want milliseconds", t)
		}
		cfg.Timeout = time.Duration(n) * time.Millisecond
	}
	if cfg.Resource, err = ResourceFromEnv(getenv); err != nil {
		return Config{}, false, err
	}
	return cfg, true, nil
}

// ResourceFromEnv is the resource of OTEL_RESOURCE_ATTRIBUTES and
// OTEL_SERVICE_NAME; service.name is "harness" when neither names one.
func ResourceFromEnv(getenv func(string) string) ([]KeyValue, error) {
	res, err := pairs(getenv("OTEL_RESOURCE_ATTRIBUTES"), "OTEL_RESOURCE_ATTRIBUTES", false)
	if err != nil {
		return nil, err
	}
	if name := getenv("OTEL_SERVICE_NAME"); name != "" {
		res["service.name"] = name
	} else if res["service.name"] == "" {
		res["service.name"] = "harness"
	}
	var kvs []KeyValue
	for _, k := range sortedKeys(res) {
		kvs = append(kvs, Str(k, res[k]))
	}
	return kvs, nil
}

// baseURL checks an endpoint and returns it without a trailing slash; a
// bare host:port is taken as http.
func baseURL(s string) (string, error) {
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("otlp endpoint %q: want http(s)://HOST:PORT", urlmask.Mask(s))
	}
	return strings.TrimSuffix(s, "/"), nil
}

// pairs reads the k=v,k=v lists of the OTEL_* variables, values
// percent-decoded. headers holds them to what an HTTP request takes (a
// token for a name, no control character in a value): net/http refuses
// the others at each request, which lost all telemetry after a start
// that looked fine. An error names the entry (a name once it is a valid
// one), never a value: headers carry credentials, and a name that is
// not one may be a whole "Authorization: Bearer …".
func pairs(s, name string, headers bool) (map[string]string, error) {
	m := map[string]string{}
	for i, p := range strings.Split(s, ",") {
		if strings.TrimSpace(p) == "" {
			continue
		}
		k, v, ok := strings.Cut(p, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%s: entry %d is not key=value", name, i+1)
		}
		if headers && !headerName(k) {
			return nil, fmt.Errorf("%s: the name of entry %d is not an HTTP header name (letters, digits and !#$%%&'*+-.^_`|~ only)", name, i+1)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%s: the value of %q is not percent-encoded (%%XX)", name, k)
		}
		if headers && !headerValue(dv) {
			return nil, fmt.Errorf("%s: the value of %q, percent-decoded, has a control character (a newline, …): not an HTTP header value", name, k)
		}
		m[k] = dv
	}
	return m, nil
}

// headerName reports whether k is an HTTP field name: a token (RFC 9110
// §5.6.2), as net/http checks it.
func headerName(k string) bool {
	for i := range len(k) {
		c := k[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return k != ""
}

// headerValue reports whether v is an HTTP field value as net/http checks
// it: no control character but a tab.
func headerValue(v string) bool {
	for i := range len(v) {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]string) []string { return sortedPointKeys(m) }

// Exporter sends the spans and metrics of runs to an OTLP/HTTP endpoint
// from one goroutine of its own: a run's events never wait on the
// network. A failed export is dropped (after one warning): a collector
// that is down, slow or failing changes nothing about a run.
type Exporter struct {
	cfg    Config
	client *http.Client
	scope  Scope
	start  Nanos // of the cumulative metrics

	mu sync.Mutex
	// batch is the request being filled: spans are encoded into it as
	// they end (nothing of a span is held but its bytes); req and ss are
	// where its enclosing lengths go, spans counts them. A full batch
	// waits in ready for the loop to send it.
	batch    []byte
	req, ss  int
	spans    int
	ready    []sealed
	queued   int      // spans in ready and batch
	held     int      // bytes of the sealed batches not yet sent
	spares   [][]byte // sent batches' buffers, for the next batches
	dropped  int
	metrics  *aggregate
	dirty    bool // metrics changed since last sent
	closed   bool
	wake     chan struct{}
	done     chan struct{}
	ctx      context.Context
	cancel   context.CancelFunc
	warnOnce sync.Once

	// timer flushes what waits (the open batch, the metrics) batchDelay
	// after it began; armed tells it is set. Those who add to a batch arm
	// it: waking the loop for it would cost a thread switch a batch.
	timer *time.Timer
	armed bool
}

// sealed is a whole ExportTraceServiceRequest of spans spans.
type sealed struct {
	body  []byte
	spans int
}

// New starts an exporter.
func New(cfg Config) *Exporter {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	x := &Exporter{cfg: cfg, client: cfg.Client, scope: Scope{Name: "harness", Version: cfg.Version},
		start: Nanos(time.Now().UnixNano()), metrics: newAggregate(), wake: make(chan struct{}, 1), done: make(chan struct{}),
		timer: time.NewTimer(batchDelay)}
	x.timer.Stop()
	if x.client == nil {
		// Redirects are not followed: the POST would come back a GET
		// without its body (a 301 or 302: all telemetry lost, and the
		// final 200 taken for success), and the user's
		// OTEL_EXPORTER_OTLP_HEADERS (an API key) would go to wherever
		// the collector points. A 3xx is an answer like a 4xx: a warning.
		x.client = &http.Client{Transport: newTransport(), CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}
	}
	x.ctx, x.cancel = context.WithCancel(context.Background())
	go x.loop()
	return x
}

// Run starts the trace of one run: feed its events to the recorder's
// Add (in stream order) and end it with Finish.
func (x *Exporter) Run(info RunInfo) *Run {
	r := &Run{x: x}
	r.rec = newRecorder(info, x.cfg.Content, x.enqueue)
	return r
}

// Run is one run's trace on its way to the exporter.
type Run struct {
	x    *Exporter
	rec  *Recorder
	once sync.Once
}

// Context is the run's span, for the agent's TRACEPARENT.
func (r *Run) Context() SpanContext { return r.rec.Context() }

// Add records one event of the run.
func (r *Run) Add(ev event.Event) { r.rec.Add(ev) }

// Finish sends the run's span and counts the run in the metrics; a run
// that never had a result (it could not start) sends nothing.
func (r *Run) Finish(res *event.Result) {
	r.once.Do(func() {
		root := r.rec.Root()
		if res == nil || root.End == 0 {
			return
		}
		r.x.enqueue(&root)
		r.x.record(r.rec, res, root)
	})
}

// Spans are sent in batches of at most batchSize spans or about
// batchBytes, each once full or batchDelay after its first span, and at
// Shutdown: a request per span would cost a run of many tool calls more
// than the spans do. A sent batch's buffer is a later one's: fresh memory
// costs a page fault a page, more than encoding into it does.
const (
	batchSize  = 2048
	batchBytes = 64 << 10
	batchDelay = time.Second
	maxSpares  = 2
)

// newTransport is http.DefaultTransport's settings (proxy from the
// environment, HTTP/2 over TLS, timeouts) with a write buffer that holds
// a whole batch: the transport writes a body with a Content-Length
// through io.Copy of an io.LimitedReader, which costs a fresh 32 KiB copy
// buffer a request, unless the connection's write buffer takes the body
// whole (and sends it, head and all, in one write).
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.WriteBufferSize = batchBytes + batchBytes/8 + 4<<10
	return t
}

// enqueue encodes s into the batch; s is not kept.
func (x *Exporter) enqueue(s *Span) {
	if x.cfg.TracesURL == "" {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed || x.queued >= maxPending {
		x.dropped++
		return
	}
	if x.spans == 0 {
		var buf []byte
		if n := len(x.spares); n > 0 {
			buf, x.spares = x.spares[n-1], x.spares[:n-1]
		} else {
			buf = make([]byte, 0, batchBytes+batchBytes/8)
		}
		x.batch, x.req, x.ss = beginTraces(buf, x.cfg.Resource, x.scope)
	}
	mark := len(x.batch)
	x.batch = appendSpanMessage(x.batch, s)
	if x.held+len(x.batch) > maxPendingBytes {
		x.dropped++
		x.batch = x.batch[:mark]
		if cap(x.batch) > 2*batchBytes {
			// The room the span grew the batch to is not kept with it.
			x.batch = append(make([]byte, 0, batchBytes+batchBytes/8), x.batch...)
		}
		return
	}
	x.spans++
	x.queued++
	switch {
	case x.spans >= batchSize || len(x.batch) >= batchBytes:
		x.seal()
		x.signal() // the loop sends it
	case x.spans == 1:
		x.arm()
	}
}

// arm sets the flush timer unless it is set; x.mu is held.
func (x *Exporter) arm() {
	if !x.armed {
		x.armed = true
		x.timer.Reset(batchDelay)
	}
}

// seal moves the batch to ready; x.mu is held.
func (x *Exporter) seal() {
	if x.spans > 0 {
		x.ready = append(x.ready, sealed{endTraces(x.batch, x.req, x.ss), x.spans})
		x.held += len(x.batch)
		x.batch, x.spans = nil, 0
	}
}

// signal wakes the loop; x.mu is held (Shutdown closes wake under it).
func (x *Exporter) signal() {
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

func (x *Exporter) record(rec *Recorder, res *event.Result, root Span) {
	x.mu.Lock()
	x.metrics.add(rec, res, root)
	x.dirty = true
	if !x.closed {
		x.arm()
	}
	x.mu.Unlock()
}

// loop sends what is pending until Shutdown: full batches at once, the
// rest batchDelay after it began.
func (x *Exporter) loop() {
	defer close(x.done)
	defer x.timer.Stop()
	for {
		open, flush := true, false
		select {
		case _, open = <-x.wake:
			flush = !open // else full batches only, if any
		case <-x.timer.C:
			flush = true
		}
		x.mu.Lock()
		if flush {
			x.armed = false
			x.seal()
		}
		batches, dropped := x.ready, x.dropped
		x.ready, x.dropped = nil, 0
		var m []byte
		if flush && x.dirty {
			m = x.metricsRequest()
			x.dirty = false
		}
		x.mu.Unlock()
		if dropped > 0 {
			x.warn(fmt.Sprintf("%d spans dropped: more than %d spans or %d MiB were waiting to be sent", dropped, maxPending, maxPendingBytes>>20))
		}
		for _, b := range batches {
			done := x.post(x.cfg.TracesURL, b.body)
			x.mu.Lock()
			x.queued -= b.spans
			x.held -= len(b.body)
			if done && len(x.spares) < maxSpares && cap(b.body) <= 2*batchBytes {
				x.spares = append(x.spares, b.body[:0])
			}
			x.mu.Unlock()
		}
		if m != nil && x.cfg.MetricsURL != "" {
			x.post(x.cfg.MetricsURL, m)
		}
		if !open {
			return
		}
	}
}

// post sends body to u, and again while the collector answers that it
// is busy (429, 502, 503, 504, as the OTLP spec says: after its
// Retry-After, else after a backoff) until the request's deadline;
// other failures are not retried. done reports whether the transport is
// done with body (it may read a request's body after Do returned).
func (x *Exporter) post(u string, body []byte) (done bool) {
	ctx, cancel := context.WithTimeout(x.ctx, x.cfg.Timeout)
	defer cancel()
	bs := newBodies(body)
	defer func() { done = bs.open.Load() == 0 }()
	backoff := firstBackoff
	for tries := 1; ; tries++ {
		resp, err := x.send(ctx, u, bs)
		if err != nil {
			if ue := (*url.Error)(nil); errors.As(err, &ue) {
				ue.URL = urlmask.Mask(ue.URL)
			}
			x.warn(fmt.Sprintf("exporting: %v", err))
			return
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			return
		}
		wait, ok := retryAfter(resp, backoff, time.Now())
		if !ok {
			x.warn(fmt.Sprintf("exporting to %s: %s%s", urlmask.Mask(u), resp.Status, x.notServed(u, resp.StatusCode)))
			return
		}
		if dl, _ := ctx.Deadline(); time.Until(dl) < wait {
			x.warn(fmt.Sprintf("exporting to %s: %s, %d tries: the next is past the deadline", urlmask.Mask(u), resp.Status, tries))
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			x.warn(fmt.Sprintf("exporting to %s: %s, %d tries: %v", urlmask.Mask(u), resp.Status, tries, ctx.Err()))
			return
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// notServed explains a 404: the collector does not take that signal (Jaeger
// takes traces only), and names the setting that stops harness sending it.
func (x *Exporter) notServed(u string, status int) string {
	if status/100 == 3 {
		return ": harness follows no redirect: give the collector's own URL"
	}
	if status != http.StatusNotFound {
		return ""
	}
	signal := "TRACES"
	if u == x.cfg.MetricsURL {
		signal = "METRICS"
	}
	return fmt.Sprintf(": the collector takes no %s there; OTEL_%s_EXPORTER=none stops harness sending them",
		strings.ToLower(signal), signal)
}

// The backoff between tries when the collector names no Retry-After.
const (
	firstBackoff = 250 * time.Millisecond
	maxBackoff   = 4 * time.Second
)

// retryAfter is how long to wait before trying a request the collector
// answered resp again; ok is false when it is not to be tried again. A
// Retry-After shorter than the backoff (0, or a date already past, as a
// collector whose clock is behind sends) does not shorten it: a busy
// collector would be asked again and again without a pause.
func retryAfter(resp *http.Response, backoff time.Duration, now time.Time) (wait time.Duration, ok bool) {
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
	default:
		return 0, false
	}
	h := strings.TrimSpace(resp.Header.Get("Retry-After"))
	// Atoi gives a number too large for an int as the largest, with
	// ErrRange.
	if n, err := strconv.Atoi(h); (err == nil || errors.Is(err, strconv.ErrRange)) && n >= 0 {
		if n > int(math.MaxInt64/time.Second) {
			// Past what a Duration holds (it wrapped round, to less than
			// the backoff): past any deadline.
			return math.MaxInt64, true
		}
		return max(time.Duration(n)*time.Second, backoff), true
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(now), backoff), true
	}
	return backoff, true
}

// send makes one request of body to u.
func (x *Exporter) send(ctx context.Context, u string, bs *bodies) (*http.Response, error) {
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, &bs.trace), http.MethodPost, u, nil)
	if err != nil {
		return nil, err
	}
	req.Body, _ = bs.get()
	req.GetBody, req.ContentLength = bs.get, int64(len(bs.data))
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "harness/"+x.cfg.Version)
	for k, v := range x.cfg.Headers {
		req.Header.Set(k, v)
	}
	return x.client.Do(req)
}

// bodies are the readers of one request body that the transport was
// given (the first, and those GetBody makes for a retry); open counts
// those it has not finished writing yet (the transport may write a body
// after Do returned). Each is an io.NopCloser of a bytes.Reader, a body
// net/http knows to be in memory: it sends the head and the body in one
// write, where a body of another type has its head flushed apart and is
// copied through a fresh 32 KiB buffer a request.
type bodies struct {
	data  []byte
	open  atomic.Int32
	trace httptrace.ClientTrace
}

func newBodies(data []byte) *bodies {
	bs := &bodies{data: data}
	bs.trace.WroteRequest = func(httptrace.WroteRequestInfo) { bs.open.Add(-1) }
	return bs
}

// get is a body for the transport. A body it never writes (a dial that
// failed) stays open: its buffer is not reused, which is only a loss.
func (bs *bodies) get() (io.ReadCloser, error) {
	bs.open.Add(1)
	return io.NopCloser(bytes.NewReader(bs.data)), nil
}

// warn tells of the first failure only: one line, however many runs.
func (x *Exporter) warn(msg string) {
	x.warnOnce.Do(func() {
		if x.cfg.Warn != nil {
			x.cfg.Warn("otlp: " + msg + " (telemetry is dropped; the runs go on)")
		}
	})
}

// Shutdown sends what is pending and stops, waiting at most until ctx is
// done and for the configured timeout: what could not be sent by then is
// dropped.
func (x *Exporter) Shutdown(ctx context.Context) {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return
	}
	x.closed = true
	close(x.wake)
	x.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, x.cfg.Timeout)
	defer cancel()
	select {
	case <-x.done:
	case <-ctx.Done():
		x.cancel() // the request in flight ends; loop returns
		<-x.done
		x.warn("flush at exit: " + ctx.Err().Error())
	}
	x.cancel()
}

// Open is a span of the trace that is not a run's and is still open: a
// bench's plan, one of its rows. The runs started under it (its Context
// as their parent) are its children.
type Open struct {
	x    *Exporter
	s    Span
	once sync.Once
}

// Start opens a span named name (INTERNAL), a child of parent, or the
// root of a new trace when parent is zero.
func (x *Exporter) Start(name string, parent SpanContext, attrs ...KeyValue) *Open {
	o := &Open{x: x, s: Span{Name: name, Kind: KindInternal, Start: Nanos(time.Now().UnixNano()), Attributes: attrs}}
	if parent.IsValid() {
		o.s.TraceID, o.s.ParentSpanID = parent.TraceID, parent.SpanID
	} else {
		randomID(o.s.TraceID[:])
	}
	randomID(o.s.SpanID[:])
	return o
}

// Context is the span, for its children.
func (o *Open) Context() SpanContext {
	return SpanContext{TraceID: o.s.TraceID, SpanID: o.s.SpanID, Sampled: true}
}

// End closes the span, adding attrs, and sends it; errorType is "" for
// a success, else the span's error.type (its status is then ERROR).
// Only the first End counts.
func (o *Open) End(errorType string, attrs ...KeyValue) {
	o.once.Do(func() {
		s := &o.s
		s.End = max(Nanos(time.Now().UnixNano()), s.Start)
		s.Attributes = append(s.Attributes, attrs...)
		if errorType != "" {
			s.Attributes = append(s.Attributes, Str(AttrErrorType, errorType))
			s.Status = SpanStatus{Code: StatusError, Message: errorType}
		}
		o.x.enqueue(s)
	})
}
