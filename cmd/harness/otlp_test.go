package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/otlptest"
)

// TestRunExportsOTLP: a run with --otlp sends its trace; the agent gets
// the run span's TRACEPARENT; no --env value reaches the collector.
func TestRunExportsOTLP(t *testing.T) {
	isolate(t)
	col := otlptest.NewReceiver(t)
	const secret = "otlp-s3cret-value"
	t.Setenv(fakeagent.EchoVars, "TRACEPARENT")
	res := runFake(t, "echo-env", "--otlp", col.URL, "--otlp-content", "--env", "MY_TOKEN="+secret)
	if res.code != 0 || res.stderr != "" {
		t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
	}
	evs, err := event.ReadAll(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatal(err)
	}
	var tp string
	for _, ev := range evs {
		if m, ok := ev.Body.(*event.Message); ok {
			tp, _, _ = strings.Cut(strings.TrimPrefix(m.Text, "TRACEPARENT="), " ")
		}
	}
	bodies, spans, _ := col.Got()
	var root ptrace.Span
	for _, s := range spans {
		if strings.HasPrefix(s.Name(), "invoke_agent ") {
			root = s
		}
	}
	if want := "00-" + root.TraceID().String() + "-" + root.SpanID().String() + "-01"; tp != want {
		t.Errorf("the agent's TRACEPARENT %q, want %q", tp, want)
	}
	if run, _ := root.Attributes().Get("harness.run.id"); run.Str() != evs[0].Run {
		t.Errorf("harness.run.id %q, want %q", run.Str(), evs[0].Run)
	}
	if len(spans) < 2 {
		t.Errorf("%d spans", len(spans))
	}
	for _, b := range bodies {
		if bytes.Contains(b, []byte(secret)) {
			t.Fatal("an --env value reached the collector")
		}
	}
}

// TestRunOTLPFaults: a collector that is down, answers 500 or hangs
// changes nothing of the run but one warning line; the flush at exit is
// bounded (OTEL_EXPORTER_OTLP_TIMEOUT).
func TestRunOTLPFaults(t *testing.T) {
	isolate(t)
	types := func(out string) []event.Type {
		evs, err := event.ReadAll(strings.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		var ts []event.Type
		for _, ev := range evs {
			// The watchdogs' warnings depend on how busy the machine is
			// (a fake slow to exit after its result lingered), not on
			// the export: CI saw one in the run without --otlp only.
			if w, ok := ev.Body.(*event.Warning); ok && (w.Code == event.WarnLingeredAfterResult || w.Code == event.WarnToolStalled || w.Code == event.WarnIdle) {
				continue
			}
			ts = append(ts, ev.Type)
		}
		return ts
	}
	base := runFake(t, "long-silent-tool", "--idle-timeout", "1m")
	for name, url := range otlptest.Faults(t) {
		t.Run(name, func(t *testing.T) {
			if name == "hung" {
				t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
			}
			res := runFake(t, "long-silent-tool", "--idle-timeout", "1m", "--otlp", url)
			if res.code != base.code || !slices.Equal(types(res.stdout), types(base.stdout)) {
				t.Errorf("exit %d (want %d), stream %v (want %v)", res.code, base.code, types(res.stdout), types(base.stdout))
			}
			lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "harness: warning: otlp: ") {
				t.Errorf("stderr %q, want one warning line", res.stderr)
			}
		})
	}
}

func TestOTLPFlagRefusesABadEndpoint(t *testing.T) {
	isolate(t)
	res := runFake(t, "long-silent-tool", "--otlp", "ftp://x")
	if res.code != exitUsage || !strings.Contains(res.stderr, "--otlp") {
		t.Errorf("exit %d, stderr %q", res.code, res.stderr)
	}
}

// TestSessionsExportOTLPJSON: a logged run's trace, from its session log,
// as OTLP JSON the collector reads: one root, a tool span per call with
// the stream's call id, usage equal to the result.
func TestSessionsExportOTLPJSON(t *testing.T) {
	isolate(t)
	res := runFake(t, "long-silent-tool", "--idle-timeout", "1m")
	evs, err := event.ReadAll(strings.NewReader(res.stdout))
	if err != nil || res.code != 0 {
		t.Fatal(res.code, err)
	}
	exp := invoke(t, "", "sessions", "export", "--format", "otlp-json", evs[0].Run)
	if exp.code != 0 {
		t.Fatalf("exit %d: %s", exp.code, exp.stderr)
	}
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(exp.stdout))
	if err != nil {
		t.Fatal(err)
	}
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	var calls, roots []string
	for i := range spans.Len() {
		s := spans.At(i)
		if id, ok := s.Attributes().Get("gen_ai.tool.call.id"); ok {
			calls = append(calls, id.Str())
		}
		if s.ParentSpanID().IsEmpty() {
			roots = append(roots, s.Name())
			in, _ := s.Attributes().Get("gen_ai.usage.input_tokens")
			u := evs[len(evs)-1].Body.(*event.Result).Usage
			if in.Int() != u.InputTokens+u.CacheReadTokens+u.CacheWriteTokens {
				t.Errorf("input tokens %d, result %+v", in.Int(), u)
			}
		}
	}
	var want []string
	for _, ev := range evs {
		if ts, ok := ev.Body.(*event.ToolStart); ok {
			want = append(want, ts.CallID)
		}
	}
	if !slices.Equal(calls, want) || !slices.Equal(roots, []string{"invoke_agent claude"}) {
		t.Errorf("calls %v (want %v), roots %v", calls, want, roots)
	}
	if bad := invoke(t, "", "sessions", "export", "--format", "xml", evs[0].Run); bad.code != exitUsage {
		t.Errorf("--format xml: exit %d", bad.code)
	}
}

// TestBenchExportsPlanAndRowSpans: bench --otlp makes one span for the
// plan, a child of it for each run row, and each run's invoke_agent span
// a child of its row's, all in one trace.
func TestBenchExportsPlanAndRowSpans(t *testing.T) {
	isolate(t)
	col := otlptest.NewReceiver(t)
	r := invoke(t, "", benchArgs(t, "bench-cli-writer", "--agents", "claude", "-p", "write out.txt", "--workdir", benchSource(t),
		"--repeat", "3", "--parallel", "2", "--report", "json", "--otlp", col.URL)...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	_, spans, _ := col.Got()
	var plans, rows, runs []ptrace.Span
	for _, s := range spans {
		switch {
		case s.Name() == "bench":
			plans = append(plans, s)
		case strings.HasPrefix(s.Name(), "bench_run "):
			rows = append(rows, s)
		case strings.HasPrefix(s.Name(), "invoke_agent "):
			runs = append(runs, s)
		}
	}
	if len(plans) != 1 || len(rows) != 3 || len(runs) != 3 {
		t.Fatalf("%d plan, %d row, %d run spans", len(plans), len(rows), len(runs))
	}
	plan := plans[0]
	if !plan.ParentSpanID().IsEmpty() {
		t.Errorf("the plan's span has a parent")
	}
	byID := map[string]ptrace.Span{}
	for _, s := range rows {
		byID[s.SpanID().String()] = s
		if s.ParentSpanID() != plan.SpanID() || s.TraceID() != plan.TraceID() {
			t.Errorf("row %s: parent %s, want the plan's %s", s.Name(), s.ParentSpanID(), plan.SpanID())
		}
	}
	seen := map[string]bool{}
	for _, s := range runs {
		row, ok := byID[s.ParentSpanID().String()]
		if !ok || seen[row.SpanID().String()] || s.TraceID() != plan.TraceID() {
			t.Fatalf("run span %s: parent %s is no row of its own", s.Name(), s.ParentSpanID())
		}
		seen[row.SpanID().String()] = true
		id, _ := s.Attributes().Get("harness.run.id")
		rowID, _ := row.Attributes().Get("harness.run.id")
		if id.Str() == "" || id.Str() != rowID.Str() || row.EndTimestamp() < s.EndTimestamp() {
			t.Errorf("run %s under row of run %s", id.Str(), rowID.Str())
		}
	}
}

// TestRunPassesTheAgentItsOTelSettings: with --otlp, Claude Code is
// started with its telemetry on, exporting to the same collector (its
// spans take TRACEPARENT as their parent); without, with none of it.
func TestRunPassesTheAgentItsOTelSettings(t *testing.T) {
	isolate(t)
	col := otlptest.NewReceiver(t)
	t.Setenv(fakeagent.EchoVars, "CLAUDE_CODE_ENABLE_TELEMETRY,CLAUDE_CODE_ENHANCED_TELEMETRY_BETA,OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	echoed := func(args ...string) string {
		res := runFake(t, "echo-env", args...)
		if res.code != 0 {
			t.Fatalf("exit %d: %s", res.code, res.stderr)
		}
		return res.stdout
	}
	on := echoed("--otlp", col.URL)
	for _, want := range []string{"CLAUDE_CODE_ENABLE_TELEMETRY=1", "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + col.URL + "/v1/traces"} {
		if !strings.Contains(on, want) {
			t.Errorf("with --otlp, the agent did not get %s", want)
		}
	}
	if off := echoed(); strings.Contains(off, "CLAUDE_CODE_ENABLE_TELEMETRY=1") {
		t.Error("without --otlp, the agent's telemetry is on")
	}
}

// TestSessionsCommandsRefuseAFIFO: a run's log replaced by a FIFO (an
// agent with full access can make one in the sessions directory) gets a
// one-line error from reparse and the exports, never a wait for a writer.
func TestSessionsCommandsRefuseAFIFO(t *testing.T) {
	home := isolate(t)
	res := runFake(t, "long-silent-tool", "--idle-timeout", "1m")
	evs, err := event.ReadAll(strings.NewReader(res.stdout))
	require.NoError(t, err)
	run := evs[0].Run
	dir := filepath.Join(home, ".local", "share", "harness", "sessions")
	for _, ext := range []string{".ndjson", ".native.jsonl"} {
		p := filepath.Join(dir, run+ext)
		require.NoError(t, os.Remove(p))
		require.NoError(t, syscall.Mkfifo(p, 0o600))
	}
	for _, args := range [][]string{
		{"sessions", "reparse", run},
		{"sessions", "export", "--format", "otlp-json", run},
		{"sessions", "export", "--format", "atif", run},
	} {
		done := make(chan result, 1)
		go func() { done <- invoke(t, "", args...) }()
		select {
		case r := <-done:
			require.NotZero(t, r.code, "%v", args)
			require.Contains(t, r.stderr, "not a regular file", "%v", args)
			require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, "%v: %s", args, r.stderr)
		case <-time.After(10 * time.Second):
			t.Fatalf("%v waits on the FIFO", args)
		}
	}
}
