package main

import (
	"cmp"
	"context"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/otlp"
)

// benchTrace is bench.Options.Trace when the export is on: a span for
// the plan, one for each row (its run's parent).
func (f *otlpFlags) benchTrace(runs int) func(context.Context, *bench.Spec) (context.Context, func(*bench.RunReport)) {
	if f.x == nil {
		return nil
	}
	return func(ctx context.Context, s *bench.Spec) (context.Context, func(*bench.RunReport)) {
		parent, _ := otlp.ParseTraceparent(cmp.Or(harness.Traceparent(ctx), f.outer))
		if s == nil {
			sp := f.x.Start("bench", parent, otlp.Int("harness.bench.runs", int64(runs)))
			return harness.ContextWithTraceparent(ctx, sp.Context().Traceparent()), func(*bench.RunReport) { sp.End("") }
		}
		attrs := []otlp.KeyValue{otlp.Int("harness.bench.index", int64(s.Index)), otlp.Str(otlp.AttrAgentName, s.Agent),
			otlp.Int("harness.bench.repeat", int64(s.Repeat))}
		if s.Task.Name != "" {
			attrs = append(attrs, otlp.Str("harness.bench.task", s.Task.Name))
		}
		if s.Model != "" {
			attrs = append(attrs, otlp.Str(otlp.AttrRequestModel, s.Model))
		}
		sp := f.x.Start("bench_run "+cmp.Or(s.Task.Name, s.Agent), parent, attrs...)
		return harness.ContextWithTraceparent(ctx, sp.Context().Traceparent()), func(rr *bench.RunReport) {
			end := []otlp.KeyValue{otlp.Str("harness.result.status", rr.Status)}
			if rr.Run != "" {
				end = append(end, otlp.Str("harness.run.id", rr.Run))
			}
			if rr.Reason != "" {
				end = append(end, otlp.Str("harness.bench.reason", rr.Reason))
			}
			errType := ""
			if rr.Status != event.ResultSuccess {
				errType = cmp.Or(rr.Reason, rr.Status)
			}
			if rr.Check != nil {
				end = append(end, otlp.Bool("harness.bench.passed", rr.Check.Passed))
				if !rr.Check.Passed && errType == "" {
					errType = "check_failed"
				}
			}
			sp.End(errType, end...)
		}
	}
}
