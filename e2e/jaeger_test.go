//go:build jaeger

// The OTLP export against a real backend: Jaeger v2, built once into a
// cache by 'make jaeger' (scripts/jaeger.sh) and started here on
// 127.0.0.1 (internal/jaeger). 'make test' runs it with the rest of the suite: go test -tags jaeger ./...

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/jaeger"
)

// startJaeger runs Jaeger (internal/jaeger) for the test and returns its
// OTLP/HTTP and query API base URLs.
func startJaeger(t *testing.T) (otlpURL, queryURL string) {
	s, err := jaeger.Start(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("jaeger's log:\n%s", s.Log())
		}
	})
	return s.OTLP, s.Query
}

// eventually polls cond until it holds: Jaeger stores what it receives
// asynchronously (its batch processor), so there is no event to wait on.
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not there after %s", what, limit)
		}
		<-tick.C
	}
}

// jaegerSpan is a span as Jaeger's query API gives it.
type jaegerSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Duration int64 `json:"duration"`
	Tags     []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
}

func (s jaegerSpan) tag(k string) any {
	for _, t := range s.Tags {
		if t.Key == k {
			return t.Value
		}
	}
	return nil
}

func (s jaegerSpan) parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// traces reads back the spans Jaeger holds for service.
func traces(t *testing.T, queryURL, service string) []jaegerSpan {
	resp, err := http.Get(queryURL + "/api/traces?limit=20&service=" + service)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		Data []struct {
			Spans []jaegerSpan `json:"spans"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	var spans []jaegerSpan
	for _, tr := range body.Data {
		spans = append(spans, tr.Spans...)
	}
	return spans
}

// TestJaegerTraceOfEachAgent: 'harness run --mock tool --otlp' for each
// real CLI, read back from Jaeger: one invoke_agent root, one
// execute_tool per tool call with the stream's call ids, usage equal to
// the result's.
func TestJaegerTraceOfEachAgent(t *testing.T) {
	otlpURL, queryURL := startJaeger(t)
	for _, agent := range agents {
		t.Run(agent, func(t *testing.T) {
			service := "harness-e2e-" + agent
			workdir := t.TempDir()
			o := harnessWithEnv(t, workdir, []string{"OTEL_SERVICE_NAME=" + service, "OTEL_METRICS_EXPORTER=none"},
				"run", "--agent", agent, "--mock", "tool", "--cwd", workdir, "-p", "Follow the script.",
				"--idle-timeout", "90s", "--timeout", "2m", "--otlp", otlpURL)
			require.Equal(t, 0, o.code, "stderr: %s", o.stderr)
			require.Empty(t, o.stderr)
			var calls []string
			for _, ev := range o.events {
				if ts, ok := ev.Body.(*event.ToolStart); ok {
					calls = append(calls, ts.CallID)
				}
			}
			require.NotEmpty(t, calls, "the tool scenario made no tool call")
			// The agent's own spans, where harness turns its telemetry on
			// (otlp.AgentEnv): in harness's trace, below its root.
			own := map[string]string{"claude": "claude_code."}[agent]
			var spans []jaegerSpan
			eventually(t, time.Minute, agent+"'s trace in Jaeger", func() bool {
				spans = traces(t, queryURL, service)
				n, agents := 0, 0
				for _, s := range spans {
					if strings.HasPrefix(s.OperationName, "invoke_agent") || strings.HasPrefix(s.OperationName, "execute_tool") {
						n++
					}
					if own != "" && strings.HasPrefix(s.OperationName, own) {
						agents++
					}
				}
				return n >= 1+len(calls) && (own == "" || agents > 0)
			})
			var roots []jaegerSpan
			var got []string
			for _, s := range spans {
				if s.parent() == "" {
					roots = append(roots, s)
				}
			}
			require.Len(t, roots, 1, "one trace, one root")
			root := roots[0]
			for _, s := range spans {
				require.Equal(t, root.TraceID, s.TraceID, "span %s is in harness's trace", s.OperationName)
			}
			require.Equal(t, "invoke_agent "+agent, root.OperationName)
			for _, s := range spans {
				if strings.HasPrefix(s.OperationName, "execute_tool ") {
					require.Equal(t, root.SpanID, s.parent(), "tool span %s", s.OperationName)
					got = append(got, fmt.Sprint(s.tag("gen_ai.tool.call.id")))
				}
			}
			sort.Strings(got)
			sort.Strings(calls)
			require.Equal(t, calls, got)
			u := o.result.Usage
			require.Equal(t, float64(u.InputTokens+u.CacheReadTokens+u.CacheWriteTokens), root.tag("gen_ai.usage.input_tokens"))
			require.Equal(t, float64(u.OutputTokens), root.tag("gen_ai.usage.output_tokens"))
			require.Equal(t, o.events[0].Run, root.tag("harness.run.id"))
			require.Equal(t, "invoke_agent", root.tag("gen_ai.operation.name"))
		})
	}
}
