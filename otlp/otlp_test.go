package otlp

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/otlptest"
)

const secret = "s3cr3t-v4lue-from-env"

// export runs evs through an exporter to rc and shuts it down.
func export(t *testing.T, rc *otlptest.Receiver, evs []event.Event, info RunInfo, content bool) (warnings []string) {
	t.Helper()
	cfg, ok, err := FromEnv(rc.URL, func(k string) string {
		return map[string]string{"OTEL_SERVICE_NAME": "svc", "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=test,team=a%20b"}[k]
	})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	cfg.Content = content
	cfg.Warn = func(m string) { warnings = append(warnings, m) }
	x := New(cfg)
	run := x.Run(info)
	var res *event.Result
	for _, ev := range evs {
		run.Add(ev)
		if r, ok := ev.Body.(*event.Result); ok {
			res = r
		}
	}
	run.Finish(res)
	x.Shutdown(context.Background())
	return warnings
}

func attrMap(m pcommon.Map) map[string]any {
	out := map[string]any{}
	m.Range(func(k string, v pcommon.Value) bool {
		out[k] = v.AsRaw()
		return true
	})
	return out
}

func keys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// withSecret puts the --env secret where an agent could print it: a
// tool's output and a warning.
func withSecret(evs []event.Event) []event.Event {
	for i, ev := range evs {
		if te, ok := ev.Body.(*event.ToolEnd); ok {
			c := *te
			c.Output = "token is " + secret
			evs[i].Body = &c
			break
		}
	}
	last := evs[len(evs)-1]
	evs = append(evs[:len(evs)-1:len(evs)-1], event.Event{V: 1, Type: event.TypeWarning, Run: last.Run, Seq: last.Seq, TS: last.TS,
		Body: &event.Warning{Code: event.WarnAgentStderr, Message: "saw " + secret}})
	last.Seq++
	return append(evs, last)
}

func TestTraceOfAClaudeStream(t *testing.T) {
	evs := withSecret(otlptest.ReadEvents(t, "../testdata/claude/subagent-maxturns.golden.ndjson"))
	for _, content := range []bool{false, true} {
		rc := otlptest.NewReceiver(t)
		warnings := export(t, rc, evs, RunInfo{Run: evs[0].Run, Agent: "claude", Model: "sonnet-req", Env: []string{"MY_KEY=" + secret}}, content)
		if len(warnings) != 0 {
			t.Fatalf("warnings: %v", warnings)
		}
		bodies, _, _ := rc.Got()
		for _, b := range bodies {
			if bytes.Contains(b, []byte(secret)) {
				t.Fatalf("content=%v: the --env secret is in an export", content)
			}
		}
		checkTrace(t, rc, evs, content)
	}
}

func checkTrace(t *testing.T, rc *otlptest.Receiver, evs []event.Event, content bool) {
	t.Helper()
	_, spans, metrics := rc.Got()
	var res *event.Result
	calls := map[string]*event.ToolStart{}
	usages := 0
	for _, ev := range evs {
		switch b := ev.Body.(type) {
		case *event.Result:
			res = b
		case *event.ToolStart:
			calls[b.CallID] = b
		case *event.Usage:
			usages++
		}
	}
	var root ptrace.Span
	roots, chats := 0, 0
	for _, s := range spans {
		if s.StartTimestamp() == 0 || s.EndTimestamp() < s.StartTimestamp() {
			t.Errorf("span %s not closed: %v..%v", s.Name(), s.StartTimestamp(), s.EndTimestamp())
		}
		if s.ParentSpanID().IsEmpty() {
			root = s
			roots++
		}
	}
	if roots != 1 {
		t.Fatalf("%d roots, want 1", roots)
	}
	if root.Name() != "invoke_agent claude" || root.Kind() != ptrace.SpanKindClient {
		t.Errorf("root %q kind %v", root.Name(), root.Kind())
	}
	ra := attrMap(root.Attributes())
	want := []string{AttrAgentName, AttrAgentVersion, AttrConversationID, AttrOperation, AttrProvider, AttrRequestModel, AttrResponseModel,
		AttrInputTokens, AttrOutputTokens, "harness.run.id", "harness.seq.first", "harness.seq.last", "harness.result.status",
		"harness.tool_calls", "harness.num_turns", AttrErrorType}
	if res.CostUSD != nil {
		want = append(want, "harness.cost_usd")
	}
	if res.Usage.CacheReadTokens != 0 {
		want = append(want, AttrCacheRead)
	}
	if res.Usage.CacheWriteTokens != 0 {
		want = append(want, AttrCacheCreation)
	}
	if res.ExitCode != nil {
		want = append(want, "harness.exit_code")
	}
	if content && res.Text != "" {
		want = append(want, AttrOutputMessages)
	}
	slices.Sort(want)
	if got := keys(ra); !slices.Equal(got, want) {
		t.Errorf("root attributes\n got %v\nwant %v", got, want)
	}
	u := res.Usage
	if ra[AttrInputTokens] != u.InputTokens+u.CacheReadTokens+u.CacheWriteTokens || ra[AttrOutputTokens] != u.OutputTokens {
		t.Errorf("usage %v/%v, result %+v", ra[AttrInputTokens], ra[AttrOutputTokens], u)
	}
	if ra[AttrConversationID] != res.SessionID || ra["harness.seq.first"] != int64(1) || ra["harness.seq.last"] != evs[len(evs)-1].Seq {
		t.Errorf("root %v", ra)
	}
	if res.Status != event.ResultSuccess && (root.Status().Code() != ptrace.StatusCodeError || ra[AttrErrorType] == "") {
		t.Errorf("failed run: status %v, error.type %v", root.Status().Code(), ra[AttrErrorType])
	}
	byID := map[string]ptrace.Span{}
	for _, s := range spans {
		byID[s.SpanID().String()] = s
	}
	seen := map[string]bool{}
	for _, s := range spans {
		a := attrMap(s.Attributes())
		switch a[AttrOperation] {
		case OpChat:
			chats++
			if s.ParentSpanID() != root.SpanID() {
				t.Errorf("chat span parent %v", s.ParentSpanID())
			}
		case OpExecuteTool:
			id, _ := a[AttrToolCallID].(string)
			start := calls[id]
			if start == nil || seen[id] {
				t.Errorf("tool span call id %q: not in the stream, or twice", id)
				continue
			}
			seen[id] = true
			if s.Name() != "execute_tool "+start.Name || a[AttrToolName] != start.Name || a["harness.tool.kind"] != string(start.Kind) {
				t.Errorf("tool span %q %v", s.Name(), a)
			}
			parent := root.SpanID()
			if start.ParentCallID != "" {
				for _, o := range spans {
					if attrMap(o.Attributes())[AttrToolCallID] == start.ParentCallID {
						parent = o.SpanID()
					}
				}
			}
			if s.ParentSpanID() != parent || s.TraceID() != root.TraceID() {
				t.Errorf("tool %s: parent %v, want %v", id, s.ParentSpanID(), parent)
			}
			base := []string{AttrOperation, AttrToolCallID, AttrToolName, AttrToolType, "harness.tool.kind", "harness.tool.status"}
			for _, k := range keys(a) {
				if !slices.Contains(base, k) && !slices.Contains([]string{AttrErrorType, "harness.tool.exit_code", "harness.tool.synthetic"}, k) &&
					!(content && slices.Contains([]string{AttrToolArguments, AttrToolResult, "harness.tool.diff"}, k)) {
					t.Errorf("tool %s: attribute %s", id, k)
				}
			}
			if content && !strings.Contains(a[AttrToolArguments].(string), "{") {
				t.Errorf("tool %s: no arguments with content on", id)
			}
		case OpInvokeAgent:
		default:
			t.Errorf("span %q: operation %v", s.Name(), a[AttrOperation])
		}
	}
	if len(seen) != len(calls) {
		t.Errorf("%d tool spans, %d calls", len(seen), len(calls))
	}
	if chats != usages {
		t.Errorf("%d chat spans, %d usage events", chats, usages)
	}
	if len(metrics) == 0 {
		t.Fatal("no metrics")
	}
	checkMetrics(t, metrics[len(metrics)-1], res)
}

func checkMetrics(t *testing.T, req pmetricotlp.ExportRequest, res *event.Result) {
	t.Helper()
	ms := req.Metrics().ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	found := map[string]bool{}
	for i := range ms.Len() {
		m := ms.At(i)
		found[m.Name()] = true
		switch m.Name() {
		case MetricTokenUsage:
			dps := m.Histogram().DataPoints()
			for j := range dps.Len() {
				p := dps.At(j)
				typ, _ := p.Attributes().Get(AttrTokenType)
				want := float64(res.Usage.OutputTokens)
				if typ.Str() == "input" {
					want = float64(InputTokens(res.Usage))
				}
				if p.Count() != 1 || p.Sum() != want || len(p.BucketCounts().AsRaw()) != len(tokenBounds)+1 {
					t.Errorf("token usage %s: count %d sum %v, want %v", typ.Str(), p.Count(), p.Sum(), want)
				}
			}
		case MetricRuns:
			p := m.Sum().DataPoints().At(0)
			st, _ := p.Attributes().Get("harness.result.status")
			if p.IntValue() != 1 || st.Str() != res.Status || !m.Sum().IsMonotonic() {
				t.Errorf("runs %d %s", p.IntValue(), st.Str())
			}
		}
	}
	for _, n := range []string{MetricTokenUsage, MetricDuration, MetricRuns} {
		if !found[n] {
			t.Errorf("no %s", n)
		}
	}
}

func TestTraceparentBecomesTheParent(t *testing.T) {
	evs := otlptest.ReadEvents(t, "../testdata/claude/tool.golden.ndjson")
	parent, ok := ParseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	if !ok {
		t.Fatal("traceparent not parsed")
	}
	rc := otlptest.NewReceiver(t)
	export(t, rc, evs, RunInfo{Run: evs[0].Run, Agent: "claude", Parent: parent}, false)
	_, spans, _ := rc.Got()
	for _, s := range spans {
		if s.TraceID().String() != parent.TraceID.String() {
			t.Errorf("span %s in trace %s", s.Name(), s.TraceID())
		}
		if strings.HasPrefix(s.Name(), "invoke_agent") && s.ParentSpanID().String() != parent.SpanID.String() {
			t.Errorf("root's parent %s", s.ParentSpanID())
		}
	}
	for _, bad := range []string{"", "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", "zz", "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01"} {
		if _, ok := ParseTraceparent(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestCollectorFaults: a collector that is down, fails or hangs costs one
// warning and a bounded wait at Shutdown.
func TestCollectorFaults(t *testing.T) {
	evs := otlptest.ReadEvents(t, "../testdata/claude/tool.golden.ndjson")
	for name, url := range otlptest.Faults(t) {
		t.Run(name, func(t *testing.T) {
			cfg, _, _ := FromEnv(url, func(string) string { return "" })
			cfg.Timeout = 1 // the flush deadline: a hung collector is given up at once
			if name != "hung" {
				cfg.Timeout = DefaultTimeout
			}
			if warnings := exportRun(cfg, evs, 3); len(warnings) != 1 || !strings.HasPrefix(warnings[0], "otlp: ") {
				t.Errorf("warnings %q, want one", warnings)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	if _, ok, err := FromEnv("", get); ok || err != nil {
		t.Fatalf("off: %v %v", ok, err)
	}
	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://collector:4318/"
	env["OTEL_EXPORTER_OTLP_HEADERS"] = "Authorization=Bearer%20x,X-Team=a"
	env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = "https://traces.example/otlp/v1/traces"
	cfg, ok, err := FromEnv("", get)
	if !ok || err != nil || cfg.TracesURL != "https://traces.example/otlp/v1/traces" || cfg.MetricsURL != "http://collector:4318/v1/metrics" ||
		cfg.Headers["Authorization"] != "Bearer x" || cfg.Headers["X-Team"] != "a" {
		t.Fatalf("%+v %v %v", cfg, ok, err)
	}
	if cfg, _, _ := FromEnv("127.0.0.1:4318", get); cfg.MetricsURL != "http://127.0.0.1:4318/v1/metrics" {
		t.Errorf("flag: %s", cfg.MetricsURL)
	}
	for _, bad := range []string{"ftp://x", "http://"} {
		if _, _, err := FromEnv(bad, get); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	env["OTEL_METRICS_EXPORTER"] = "none"
	if cfg, _, _ := FromEnv("", get); cfg.MetricsURL != "" || cfg.TracesURL == "" {
		t.Errorf("OTEL_METRICS_EXPORTER=none: %+v", cfg)
	}
	env["OTEL_EXPORTER_OTLP_HEADERS"] = "novalue"
	if _, _, err := FromEnv("", get); err == nil {
		t.Error("bad headers: no error")
	}
}

// TestManyBatchesArriveWhole: a run of more spans than a batch holds is
// sent in several requests, each whole (the collector decodes it), every
// span once with its own call's attributes (buffers and spans are reused).
func TestManyBatchesArriveWhole(t *testing.T) {
	const calls = 3000 // 6001 spans: more than batchSize, and than batchBytes
	rc := otlptest.NewReceiver(t)
	evs := toolStream(calls)
	if w := export(t, rc, evs, RunInfo{Run: "run_x", Agent: "claude"}, false); len(w) != 0 {
		t.Fatal(w)
	}
	bodies, spans, _ := rc.Got()
	var traces int
	for _, b := range bodies {
		if len(b) > batchBytes+batchBytes/8 {
			t.Errorf("a request of %d bytes", len(b))
		}
		traces++
	}
	if traces < 4 || len(spans) != 2*calls+1 {
		t.Fatalf("%d requests, %d spans", traces, len(spans))
	}
	ids, calls0 := map[string]bool{}, map[string]bool{}
	for _, s := range spans {
		ids[s.SpanID().String()] = true
		a := attrMap(s.Attributes())
		if id, ok := a[AttrToolCallID].(string); ok {
			if calls0[id] || s.Name() != "execute_tool Bash" || a["harness.tool.status"] != "ok" {
				t.Fatalf("tool span %s: %v", s.Name(), a)
			}
			calls0[id] = true
		} else if a[AttrOperation] == OpChat && (a[AttrInputTokens] != int64(10) || s.Name() != "chat claude-sonnet-4-5") {
			t.Fatalf("chat span %s: %v", s.Name(), a)
		}
	}
	if len(ids) != len(spans) || len(calls0) != calls {
		t.Errorf("%d span ids, %d calls for %d spans", len(ids), len(calls0), len(spans))
	}
}

// TestBusyCollectorIsRetried: a collector that answers 429 or 503 gets
// the request again (after its Retry-After) until it takes it; one that
// refuses it (400) is not asked again. Neither changes the run.
func TestBusyCollectorIsRetried(t *testing.T) {
	evs := otlptest.ReadEvents(t, "../testdata/claude/tool.golden.ndjson")
	cases := []struct {
		name       string
		retryAfter string
		statuses   []int
		spans      bool // the spans arrive
		warnings   int
	}{
		{"503 with Retry-After", "0", []int{503, 503}, true, 0},
		{"429 with an HTTP date", "Wed, 21 Oct 2015 07:28:00 GMT", []int{429}, true, 0},
		{"429 without Retry-After", "", []int{429}, true, 0},
		{"400", "0", []int{400}, false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := otlptest.NewReceiver(t)
			rc.FailFirst(c.retryAfter, c.statuses...)
			cfg, _, _ := FromEnv(rc.URL, func(k string) string { return map[string]string{"OTEL_METRICS_EXPORTER": "none"}[k] })
			warnings := exportRun(cfg, evs, 1)
			_, spans, _ := rc.Got()
			want := len(c.statuses) + 1
			if !c.spans {
				want = 1
			}
			if (len(spans) > 0) != c.spans || rc.Requests() != want || len(warnings) != c.warnings {
				t.Errorf("%d spans, %d requests (want %d), warnings %q", len(spans), rc.Requests(), want, warnings)
			}
		})
	}
}

// TestNotServedSignalIsNamed: a collector that answers 404 for a signal
// (Jaeger takes no metrics) gets one warning that names the setting
// turning that signal off, and is not asked again.
func TestNotServedSignalIsNamed(t *testing.T) {
	evs := otlptest.ReadEvents(t, "../testdata/claude/tool.golden.ndjson")
	for signal, off := range map[string]string{"metrics": "OTEL_TRACES_EXPORTER", "traces": "OTEL_METRICS_EXPORTER"} {
		rc := otlptest.NewReceiver(t)
		rc.FailFirst("0", 404)
		cfg, _, _ := FromEnv(rc.URL, func(k string) string { return map[string]string{off: "none"}[k] })
		warnings := exportRun(cfg, evs, 1)
		want := "OTEL_" + strings.ToUpper(signal) + "_EXPORTER=none"
		if len(warnings) != 1 || !strings.Contains(warnings[0], "404") || !strings.Contains(warnings[0], want) || rc.Requests() != 1 {
			t.Errorf("%s: %d requests, warnings %q, want one naming %s", signal, rc.Requests(), warnings, want)
		}
	}
}

// TestRetriesEndAtTheDeadline: a collector that stays busy is not asked
// again past the flush deadline (its Retry-After, or the backoff, is
// longer): the spans are dropped, with one warning.
func TestRetriesEndAtTheDeadline(t *testing.T) {
	evs := otlptest.ReadEvents(t, "../testdata/claude/tool.golden.ndjson")
	for _, retryAfter := range []string{"3600", ""} {
		rc := otlptest.NewReceiver(t)
		rc.FailFirst(retryAfter, 503, 503, 503, 503)
		cfg, _, _ := FromEnv(rc.URL, func(string) string { return "" })
		cfg.Timeout = firstBackoff / 2
		warnings := exportRun(cfg, evs, 1)
		if len(warnings) != 1 || !strings.Contains(warnings[0], "503") || rc.Requests() != 2 { // traces and metrics, once each
			t.Errorf("Retry-After %q: %d requests, warnings %q", retryAfter, rc.Requests(), warnings)
		}
	}
}

// TestRetryAfterNeverShortensTheBackoff: a collector that keeps answering
// 503 with Retry-After 0 (or a date already past: its clock is behind) is
// asked again after the backoff, not at once in a loop.
func TestRetryAfterNeverShortensTheBackoff(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	busy := func(h string) *http.Response {
		r := &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}}
		if h != "" {
			r.Header.Set("Retry-After", h)
		}
		return r
	}
	for _, c := range []struct {
		header string
		want   time.Duration
	}{
		{"", time.Second},
		{"0", time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), time.Second},
		{"3", 3 * time.Second},
		{now.Add(10 * time.Second).Format(http.TimeFormat), 10 * time.Second},
		{"soon", time.Second},
	} {
		wait, ok := retryAfter(busy(c.header), time.Second, now)
		if !ok || wait != c.want {
			t.Errorf("Retry-After %q: wait %v, %v; want %v", c.header, wait, ok, c.want)
		}
	}
	rc := otlptest.NewReceiver(t)
	rc.FailFirst("0", slices.Repeat([]int{503}, 1000)...)
	cfg, _, _ := FromEnv(rc.URL, func(k string) string { return map[string]string{"OTEL_METRICS_EXPORTER": "none"}[k] })
	cfg.Timeout = 3 * firstBackoff / 2 // a try at once, one after the first backoff; the next (2x) is past it
	warnings := exportRun(cfg, otlptest.ReadEvents(t, "../testdata/claude/tool.golden.ndjson"), 1)
	if rc.Requests() != 2 || len(warnings) != 1 {
		t.Errorf("%d requests in %v, warnings %q; want 2", rc.Requests(), cfg.Timeout, warnings)
	}
}

// TestMessagesShowNoCredentials: a password in the endpoint and the values
// of OTEL_EXPORTER_OTLP_HEADERS (an Authorization header) reach no warning
// or error: they go to the terminal.
func TestMessagesShowNoCredentials(t *testing.T) {
	const password, token = "hunter2pass", "sk-ant-api03-TOKEN"
	rc := otlptest.NewReceiver(t)
	rc.FailFirst("", http.StatusUnauthorized)
	withUser := strings.Replace(rc.URL, "://", "://otlpuser:"+password+"@", 1)
	cfg, _, err := FromEnv(withUser, func(k string) string { return map[string]string{"OTEL_METRICS_EXPORTER": "none"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	warnings := exportRun(cfg, otlptest.ReadEvents(t, "../testdata/claude/tool.golden.ndjson"), 1)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "401") || strings.Contains(warnings[0], password) {
		t.Errorf("warnings %q: want one about the 401, without the password", warnings)
	}
	for _, c := range []struct{ endpoint, headers string }{
		{"ftp://otlpuser:" + password + "@127.0.0.1:4318", ""},
		{"http://otlpuser:" + password + "/x@127.0.0.1:4318", ""}, // not a URL at all
		{"http://127.0.0.1:4318", "Authorization: Bearer " + token},
		{"http://127.0.0.1:4318", "Authorization=Bearer%zz" + token},
	} {
		_, _, err := FromEnv(c.endpoint, func(k string) string { return map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": c.headers}[k] })
		if err == nil || strings.Contains(err.Error(), password) || strings.Contains(err.Error(), token) {
			t.Errorf("%q, headers %q: error %v, want one without the secret", c.endpoint, c.headers, err)
		}
	}
}

// TestMessagesShowNoQueryKey: a key in the endpoint's query (collectors
// that take ?api_key=…) reaches no warning, neither a refused request's
// nor a transport error's (Go's url.Error keeps the query).
func TestMessagesShowNoQueryKey(t *testing.T) {
	const key = "QUERYSECRET123"
	rc := otlptest.NewReceiver(t)
	rc.FailFirst("", http.StatusUnauthorized)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + l.Addr().String() // nothing listens: a transport error
	l.Close()
	for _, endpoint := range []string{rc.URL + "/v1/traces?api_key=" + key, closedURL + "/v1/traces?api_key=" + key} {
		cfg, _, err := FromEnv("", func(k string) string {
			return map[string]string{"OTEL_METRICS_EXPORTER": "none", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": endpoint}[k]
		})
		if err != nil {
			t.Fatal(err)
		}
		warnings := exportRun(cfg, otlptest.ReadEvents(t, "../testdata/claude/tool.golden.ndjson"), 1)
		if len(warnings) != 1 || strings.Contains(warnings[0], key) || !strings.Contains(warnings[0], "?api_key=***") {
			t.Errorf("%s: warnings %q: want one, the query's value hidden", endpoint, warnings)
		}
	}
	if rc.Requests() != 1 {
		t.Errorf("the receiver got %d requests, want 1: the whole URL is the traces endpoint", rc.Requests())
	}
	// A base endpoint with a query would get the signal's path inside it.
	_, _, err = FromEnv(rc.URL+"?api_key="+key, func(string) string { return "" })
	if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "takes no query") {
		t.Errorf("base endpoint with a query: error %v", err)
	}
}

// exportRun exports runs runs of evs with cfg, shuts the exporter down
// and returns its warnings.
func exportRun(cfg Config, evs []event.Event, runs int) []string {
	var warnings []string
	var mu sync.Mutex
	cfg.Warn = func(m string) { mu.Lock(); warnings = append(warnings, m); mu.Unlock() }
	x := New(cfg)
	for range runs {
		run := x.Run(RunInfo{Run: evs[0].Run, Agent: "claude"})
		for _, ev := range evs {
			run.Add(ev)
		}
		run.Finish(evs[len(evs)-1].Body.(*event.Result))
	}
	x.Shutdown(context.Background())
	mu.Lock()
	defer mu.Unlock()
	return warnings
}

// TestPendingIsSentAfterTheDelay: spans that do not fill a batch, and
// the metrics of a finished run, are sent batchDelay after they began,
// without a Shutdown (a serve process's runs are exported as they end).
func TestPendingIsSentAfterTheDelay(t *testing.T) {
	rc := otlptest.NewReceiver(t)
	cfg, _, err := FromEnv(rc.URL, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	x := New(cfg)
	defer x.Shutdown(context.Background())
	evs := toolStream(2)
	run := x.Run(RunInfo{Run: "run_x", Agent: "claude"})
	for _, ev := range evs {
		run.Add(ev)
	}
	run.Finish(evs[len(evs)-1].Body.(*event.Result))
	rc.Wait(t, 2) // the spans, the metrics
	if _, spans, metrics := rc.Got(); len(spans) != 5 || len(metrics) != 1 {
		t.Fatalf("%d spans, %d metrics requests", len(spans), len(metrics))
	}
	// A second run after the first flush: the timer is armed again.
	run = x.Run(RunInfo{Run: "run_y", Agent: "claude"})
	for _, ev := range evs {
		run.Add(ev)
	}
	run.Finish(evs[len(evs)-1].Body.(*event.Result))
	rc.Wait(t, 2)
	if _, spans, metrics := rc.Got(); len(spans) != 10 || len(metrics) != 2 {
		t.Fatalf("%d spans, %d metrics requests", len(spans), len(metrics))
	}
}

// TestChatSpanNamedByRequestModel: a chat span is named by the model the
// run asked for (gen_ai.request.model), not by the one the agent resolved
// it to; without one asked for, by the agent's.
func TestChatSpanNamedByRequestModel(t *testing.T) {
	for _, tc := range []struct{ asked, want string }{{"sonnet", "chat sonnet"}, {"", "chat claude-sonnet-4-5"}} {
		rc := otlptest.NewReceiver(t)
		if w := export(t, rc, toolStream(1), RunInfo{Run: "run_x", Agent: "claude", Model: tc.asked}, false); len(w) != 0 {
			t.Fatal(w)
		}
		_, spans, _ := rc.Got()
		var names []string
		for _, s := range spans {
			if attrMap(s.Attributes())[AttrOperation] == OpChat {
				names = append(names, s.Name())
			}
		}
		if len(names) != 1 || names[0] != tc.want {
			t.Errorf("asked %q: chat spans %q, want %q", tc.asked, names, tc.want)
		}
	}
}
