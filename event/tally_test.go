package event_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// tally adds bodies as a stream numbers them: seq from 1, ts 100 apart.
func tally(t *testing.T, bodies ...event.Body) event.Tally {
	t.Helper()
	var ta event.Tally
	for i, b := range bodies {
		ta.Add(event.Event{Type: b.EventType(), Seq: int64(i + 1), TS: int64(100 * (i + 1)), Body: b})
	}
	return ta
}

func TestTally(t *testing.T) {
	t.Run("live-run", func(t *testing.T) {
		ta := tally(t,
			&event.SessionStart{Agent: "claude", Model: "sonnet", Cwd: "/w"},
			&event.ToolStart{CallID: "a", Kind: event.KindShell},
			&event.ToolEnd{CallID: "a", Status: event.StatusOK},
			&event.ToolStart{CallID: "b", Kind: event.KindShell},
			&event.ToolEnd{CallID: "b", Status: event.StatusError},
			&event.ToolStart{CallID: "c", Kind: event.KindRead},
			&event.Usage{InputTokens: 10, OutputTokens: 2, CostUSD: 0.5, CostEstimated: true},
			&event.Usage{InputTokens: 5, CacheReadTokens: 7},
			&event.Warning{Code: event.WarnIdle},
		)
		require.Equal(t, int64(9), ta.Events)
		require.Equal(t, int64(900), ta.LastTS)
		require.Equal(t, []string{"claude", "sonnet", "/w"}, []string{ta.Agent, ta.Model, ta.Cwd})
		require.Equal(t, 3, ta.ToolCalls)
		require.Equal(t, map[string]int{"shell": 2, "read": 1}, ta.ToolsByKind)
		require.Equal(t, 1, ta.ToolsFailed, "only a status other than ok fails")
		require.Equal(t, 1, ta.Warnings)
		require.False(t, ta.Ended())
		require.Equal(t, event.Tokens{Input: 15, Output: 2, CacheRead: 7}, ta.Tokens(), "the usage events' sum")
		usd, est := ta.Cost()
		require.Equal(t, 0.5, *usd, "before the result: the usage events' cost")
		require.True(t, est)
	})

	t.Run("result-totals-replace-the-sum", func(t *testing.T) {
		ta := tally(t,
			&event.Usage{InputTokens: 1, CostUSD: 0.1, CostEstimated: true},
			&event.Result{Status: event.ResultSuccess, DurationMS: 42, ExitCode: event.Int(0),
				Usage: event.Usage{InputTokens: 3, ReasoningTokens: 4, CostUSD: 0.3}, CostUSD: event.Float(0.3)},
			&event.Usage{InputTokens: 1000}, // nothing counts after the result
		)
		require.True(t, ta.Ended())
		require.Equal(t, event.ResultSuccess, ta.Status)
		require.Equal(t, int64(42), ta.DurationMS)
		require.Equal(t, 0, *ta.ExitCode)
		require.Equal(t, event.Tokens{Input: 3, Reasoning: 4}, ta.Tokens())
		usd, est := ta.Cost()
		require.Equal(t, 0.3, *usd)
		require.False(t, est, "the result's word on the estimate")
	})

	t.Run("no-cost", func(t *testing.T) {
		// A zero cost, even an estimated one, is no cost (serve, bench and
		// mcpserver printed none).
		ta := tally(t, &event.Result{Status: event.ResultSuccess, Usage: event.Usage{InputTokens: 1, CostEstimated: true},
			CostEstimated: true})
		usd, est := ta.Cost()
		require.Nil(t, usd)
		require.False(t, est)
	})

	t.Run("cost-in-usage-only", func(t *testing.T) {
		// A result without cost_usd whose usage has one (a hand-made log):
		// serve's listing showed the usage's.
		ta := tally(t, &event.Result{Status: event.ResultError, Usage: event.Usage{CostUSD: 0.2, CostEstimated: true}})
		usd, est := ta.Cost()
		require.Equal(t, 0.2, *usd)
		require.True(t, est)
	})

	t.Run("turns", func(t *testing.T) {
		msgs := []event.Body{
			&event.Message{Role: event.RoleAssistant, MessageID: "m1", Text: "a"},
			&event.Message{Role: event.RoleAssistant, MessageID: "m1", Text: "b"}, // one message, two blocks
			&event.Message{Role: event.RoleAssistant, Text: "c"},                  // no id: one each
			&event.Message{Role: event.RoleAssistant, Text: "c"},
			&event.Message{Role: event.RoleUser, MessageID: "u1"},
			&event.Message{Role: event.RoleAssistant, MessageID: "m2"},
		}
		ta := tally(t, msgs...)
		require.Equal(t, 4, ta.Turns(), "so far")
		ta = tally(t, append(msgs, &event.Result{Status: event.ResultSuccess})...)
		require.Equal(t, 4, ta.Turns(), "the agent reported none")
		ta = tally(t, append(msgs, &event.Result{Status: event.ResultSuccess, NumTurns: 9})...)
		require.Equal(t, 9, ta.Turns(), "the agent's own count wins")
	})

	t.Run("fatal", func(t *testing.T) {
		agent := &event.Error{Code: event.ErrAgentError, Fatal: true}
		exit := &event.Error{Code: event.ErrProcessExit}
		stop := &event.Error{Code: event.ErrInterrupted, Fatal: true}
		ta := tally(t, agent, exit)
		require.Same(t, agent, ta.Fatal)
		require.Same(t, exit, ta.LastError)
		ta = tally(t, agent, exit, stop)
		require.Same(t, stop, ta.Fatal, "the harness's verdict, which the result's status tells")
		require.Same(t, stop, ta.LastError)
	})

	t.Run("empty", func(t *testing.T) {
		var ta event.Tally
		require.Nil(t, ta.ToolsByKind)
		require.Zero(t, ta.Turns())
		usd, _ := ta.Cost()
		require.Nil(t, usd)
		require.Equal(t, event.Tokens{}, ta.Tokens())
	})

	t.Run("out-of-order-seq", func(t *testing.T) {
		var ta event.Tally
		ta.Add(event.Event{Seq: 7, Body: &event.Warning{}})
		ta.Add(event.Event{Seq: 3, Body: &event.Warning{}})
		require.Equal(t, int64(7), ta.Events, "the highest seq")
		require.Zero(t, ta.LastTS, "no ts seen")
	})

	t.Run("clone", func(t *testing.T) {
		ta := tally(t, &event.ToolStart{Kind: event.KindShell}, &event.Message{Role: event.RoleAssistant, MessageID: "m"})
		c := ta.Clone()
		ta.Add(event.Event{Body: &event.ToolStart{Kind: event.KindShell}})
		ta.Add(event.Event{Body: &event.Message{Role: event.RoleAssistant, MessageID: "n"}})
		require.Equal(t, map[string]int{"shell": 1}, c.ToolsByKind)
		require.Equal(t, 1, c.Turns())
		require.Equal(t, 2, ta.Turns())
	})
}

// FuzzTallyAnyLine: counting any line a log may hold (torn, hand-edited,
// of a future version) never panics, twice over and in a clone, as serve
// counts every run's log for its list.
func FuzzTallyAnyLine(f *testing.F) {
	f.Add([]byte(`{"v":1,"type":"result","run":"r","seq":9,"ts":5,"status":"success","text":"héllo","usage":{"input_tokens":3},"cost_usd":0.1,"exit_code":0}`))
	f.Add([]byte(`{"v":1,"type":"tool_start","run":"r","seq":2,"kind":"shell"}`))
	f.Add([]byte(`{"v":1,"type":"tool_end","run":"r","seq":3,"call_id":"c","status":"error"}`))
	f.Add([]byte(`{"v":1,"type":"error","run":"r","seq":4,"code":"idle_timeout","fatal":true,"partial":{"events":3}}`))
	f.Add([]byte(`{"type":"usage","input_tokens":"x"}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, err := event.Decode(line)
		if err != nil {
			return
		}
		var ta event.Tally
		ta.Add(ev)
		ta.Add(ev)
		c := ta.Clone()
		c.Add(ev)
		ta.Cost()
		ta.Turns()
		ta.Tokens()
	})
}
