package atif_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/acp"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/atif"
	"github.com/agentharness/harness/atif/atiftest"
	"github.com/agentharness/harness/event"
)

// validate holds a trajectory file to the schema and to Validate, and
// returns it decoded.
func validate(t testing.TB, data []byte) *atif.Trajectory {
	t.Helper()
	tr, err := atiftest.Validate(data)
	require.NoError(t, err)
	return tr
}

// export is what sessions export --format atif does with a stream.
func export(t testing.TB, evs []event.Event, m atif.Meta) ([]byte, *atif.Trajectory) {
	t.Helper()
	tr := atif.FromEvents(evs, m)
	data, err := atif.Marshal(tr)
	require.NoError(t, err)
	return data, tr
}

func readEvents(t testing.TB, file string) []event.Event {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	evs, err := event.ReadAll(f)
	require.NoError(t, err)
	return evs
}

// streams are the real captured streams of every agent: the goldens of
// each CLI adapter and the ACP captures, normalized.
func streams(t *testing.T) map[string][]event.Event {
	t.Helper()
	out := map[string][]event.Event{}
	files, err := filepath.Glob("../testdata/*/*.golden.ndjson")
	require.NoError(t, err)
	for _, f := range files {
		out[filepath.Base(filepath.Dir(f))+"/"+strings.TrimSuffix(filepath.Base(f), ".golden.ndjson")] = readEvents(t, f)
	}
	caps, err := filepath.Glob("../acp/testdata/*.jsonl")
	require.NoError(t, err)
	for _, f := range caps {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		a, err := acp.Custom("acp", []string{"acp"})
		require.NoError(t, err)
		evs, err := event.ReadAll(bytes.NewReader(adaptertest.Normalize(a, data, false)))
		require.NoError(t, err)
		out["acp/"+strings.TrimSuffix(filepath.Base(f), ".jsonl")] = evs
	}
	for _, agent := range []string{"claude", "codex", "gemini", "opencode", "cursor", "acp"} {
		n := 0
		for name := range out {
			if strings.HasPrefix(name, agent+"/") {
				n++
			}
		}
		require.NotZero(t, n, "no captured stream of %s", agent)
	}
	return out
}

// TestCapturedStreams: the trajectory of every captured stream is valid
// ATIF (the schema, by a validator library, and Validate) and exact
// (Check: nothing of the stream dropped, usage equal to the stream's).
func TestCapturedStreams(t *testing.T) {
	for name, evs := range streams(t) {
		t.Run(name, func(t *testing.T) {
			data, _ := export(t, evs, atif.Meta{Run: evs[0].Run})
			tr := validate(t, data)
			require.NoError(t, atif.Check(tr, evs))
			require.Equal(t, atif.SchemaVersion, tr.SchemaVersion)
			start := evs[0].Body.(*event.SessionStart)
			require.Equal(t, start.Agent, tr.Agent.Name)
			if start.Model != "" {
				require.Equal(t, start.Model, tr.Agent.ModelName)
			}
		})
	}
}

// TestGolden: the trajectory of a multi-step OpenCode run, read against
// its events: three model calls (step_finish), each with its own usage and
// cost; the reasoning, tool calls and observations of each in its step;
// the two closing messages as two steps (the last call's usage in the
// last); final metrics the result's.
func TestGolden(t *testing.T) {
	evs := readEvents(t, "../testdata/opencode/multi_step_reasoning.golden.ndjson")
	data, tr := export(t, evs, atif.Meta{Run: evs[0].Run, Prompt: "How many files are there, and are there tests?"})
	validate(t, data)
	require.NoError(t, atif.Check(tr, evs))
	golden := "testdata/opencode-multi_step_reasoning.trajectory.json"
	if adaptertest.Updating() {
		require.NoError(t, os.WriteFile(golden, data, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), string(data))
}

// TestCheckCatches: Check fails on a trajectory with a step left out, a
// tool result left out, or usage that is not the stream's.
func TestCheckCatches(t *testing.T) {
	evs := readEvents(t, "../testdata/opencode/multi_step_reasoning.golden.ndjson")
	fresh := func() *atif.Trajectory {
		_, tr := export(t, evs, atif.Meta{Run: evs[0].Run})
		require.NoError(t, atif.Check(tr, evs))
		return tr
	}
	renumber := func(tr *atif.Trajectory) {
		for i := range tr.Steps {
			tr.Steps[i].StepID = i + 1
		}
		tr.FinalMetrics.TotalSteps = len(tr.Steps)
	}
	for i := range fresh().Steps {
		tr := fresh()
		tr.Steps = append(tr.Steps[:i], tr.Steps[i+1:]...)
		renumber(tr)
		require.Error(t, atif.Check(tr, evs), "step %d dropped", i+1)
	}
	tr := fresh()
	tr.Steps[0].Observation = nil
	require.Error(t, atif.Check(tr, evs), "observation dropped")

	tr = fresh()
	tr.Steps[0].Metrics.Extra["input_tokens"] = int64(2099)
	tr.Steps[0].Metrics.PromptTokens--
	require.ErrorContains(t, atif.Check(tr, evs), "usage")

	tr = fresh()
	tr.Steps[0].Metrics.CompletionTokens++
	require.ErrorContains(t, atif.Check(tr, evs), "metrics")

	tr = fresh()
	tr.FinalMetrics.TotalCachedTokens++
	require.ErrorContains(t, atif.Check(tr, evs), "final_metrics")
}

// FuzzFromEvents: whatever the stream (cut, reordered, broken), the
// trajectory is made without a panic and is valid ATIF.
func FuzzFromEvents(f *testing.F) {
	for _, file := range []string{"../testdata/opencode/multi_step_reasoning.golden.ndjson", "../testdata/claude/subagent-maxturns.golden.ndjson", "../testdata/codex/multi_turn.golden.ndjson"} {
		data, err := os.ReadFile(file)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Each line that decodes, whatever the lines around it: streams
		// with events missing, repeated or out of order.
		var evs []event.Event
		for _, line := range bytes.Split(data, []byte("\n")) {
			if ev, err := event.Decode(line); err == nil {
				evs = append(evs, ev)
			}
		}
		out, err := atif.Marshal(atif.FromEvents(evs, atif.Meta{}))
		require.NoError(t, err)
		validate(t, out)
	})
}

// TestSchemaRejects: the schema is Harbor's, not a rubber stamp: it
// refuses what Harbor's models refuse.
func TestSchemaRejects(t *testing.T) {
	ok := `{"schema_version":"ATIF-v1.7","agent":{"name":"a","version":"1"},"steps":[{"step_id":1,"source":"user","message":"hi"}]}`
	for name, doc := range map[string]string{
		"unknown field":            strings.Replace(ok, `"steps"`, `"stepz":1,"steps"`, 1),
		"no agent version":         strings.Replace(ok, `,"version":"1"`, ``, 1),
		"unknown version":          strings.Replace(ok, `ATIF-v1.7`, `ATIF-v2.0`, 1),
		"tool call of a user":      strings.Replace(ok, `"message":"hi"`, `"message":"hi","tool_calls":[]`, 1),
		"metrics of a user":        strings.Replace(ok, `"message":"hi"`, `"message":"hi","metrics":{}`, 1),
		"unknown source":           strings.Replace(ok, `"user"`, `"tool"`, 1),
		"step_id 0":                strings.Replace(ok, `"step_id":1`, `"step_id":0`, 1),
		"no message":               strings.Replace(ok, `,"message":"hi"`, ``, 1),
		"unresolvable ref":         strings.Replace(ok, `"message":"hi"`, `"message":"hi","observation":{"results":[{"subagent_trajectory_ref":[{"session_id":"s"}]}]}`, 1),
		"metrics field":            strings.Replace(ok, `"source":"user","message":"hi"`, `"source":"agent","message":"hi","metrics":{"tokens":1}`, 1),
		"metrics of no model call": strings.Replace(ok, `"source":"user","message":"hi"`, `"source":"agent","message":"hi","llm_call_count":0,"metrics":{}`, 1),
		"subagent without id":      strings.Replace(ok, `"steps"`, `"subagent_trajectories":[{"agent":{"name":"a","version":"1"},"steps":[{"step_id":1,"source":"user","message":""}]}],"steps"`, 1),
		"no steps":                 `{"schema_version":"ATIF-v1.7","agent":{"name":"a","version":"1"},"steps":[]}`,
		"subagent without steps":   strings.Replace(ok, `"steps"`, `"subagent_trajectories":[{"trajectory_id":"s","agent":{"name":"a","version":"1"},"steps":[]}],"steps"`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			require.Error(t, atiftest.ValidateSchema([]byte(doc)))
		})
	}
	require.NoError(t, atiftest.ValidateSchema([]byte(ok)))
}

// TestBrokenStreams: every captured stream with events dropped, repeated
// and swapped (a seeded sequence, the same on every run) still gives a
// valid trajectory: what the fuzzer does, on every test run.
func TestBrokenStreams(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for name, evs := range streams(t) {
		for range 20 {
			var broken []event.Event
			for _, ev := range evs {
				switch rng.IntN(6) {
				case 0: // dropped
				case 1:
					broken = append(broken, ev, ev)
				default:
					broken = append(broken, ev)
				}
			}
			for range 3 {
				if len(broken) > 1 {
					i, j := rng.IntN(len(broken)), rng.IntN(len(broken))
					broken[i], broken[j] = broken[j], broken[i]
				}
			}
			out, err := atif.Marshal(atif.FromEvents(broken, atif.Meta{}))
			require.NoError(t, err, name)
			_, err = atiftest.Validate(out)
			require.NoError(t, err, name)
		}
	}
}

// TestSessionTurns: a live session's stream (made by event.Stream, so it
// holds to the invariants): each turn's prompt is a user step before its
// turn's agent steps, a usage event between turns' content stays in its
// turn, and a call the session's end closed is an observation too.
func TestSessionTurns(t *testing.T) {
	var evs []event.Event
	s := event.NewStream(event.StreamConfig{Sink: func(ev event.Event) { evs = append(evs, ev) },
		Start: event.SessionStart{Agent: "claude", Cwd: "/w"}})
	input := json.RawMessage(`{"command":"ls"}`)
	require.NoError(t, s.Emit(
		&event.SessionStart{Agent: "claude", SessionID: "s1", Model: "m"},
		&event.TurnStart{Prompt: "first"},
		&event.Message{Role: "assistant", Text: "one"},
		&event.Usage{InputTokens: 10, OutputTokens: 2},
		&event.TurnEnd{Status: event.ResultSuccess, Text: "one"},
		&event.TurnStart{Prompt: "second"},
		&event.Reasoning{Text: "think"},
		&event.ToolStart{CallID: "c1", Name: "Bash", Kind: event.KindShell, Input: input, Command: "ls"},
		&event.Usage{InputTokens: 20, CacheReadTokens: 5, OutputTokens: 3},
		&event.ToolEnd{CallID: "c1", Name: "Bash", Kind: event.KindShell, Status: "ok", Output: "a\n"},
		&event.Message{Role: "assistant", Text: "two"},
		&event.Usage{InputTokens: 1, OutputTokens: 1, CostUSD: 0.5},
		&event.TurnEnd{Status: event.ResultSuccess, Text: "two"},
		&event.TurnStart{Prompt: "third"},
		&event.ToolStart{CallID: "c2", Name: "Bash", Kind: event.KindShell, Input: input, Command: "ls"},
	))
	s.Finish(event.Outcome{Status: event.ResultCancelled})
	require.NoError(t, event.Check(evs))

	data, tr := export(t, evs, atif.Meta{})
	validate(t, data)
	require.NoError(t, atif.Check(tr, evs))
	var got []string
	for _, st := range tr.Steps {
		got = append(got, st.Source+":"+st.ReasoningContent+"|"+st.Message)
	}
	require.Equal(t, []string{"user:|first", "agent:|one", "user:|second", "agent:think|", "agent:|two", "user:|third", "agent:|"}, got)
	require.Equal(t, "turn_2", tr.Steps[2].Extra["turn_id"])
	require.Equal(t, int64(10), tr.Steps[1].Metrics.PromptTokens)
	require.Equal(t, int64(25), tr.Steps[3].Metrics.PromptTokens, "input and cache read")
	require.Equal(t, int64(5), tr.Steps[3].Metrics.CachedTokens)
	require.Equal(t, "cancelled", tr.Steps[6].Observation.Results[0].Extra["status"])
	require.Equal(t, true, tr.Steps[6].Observation.Results[0].Extra["synthetic"])
	require.InDelta(t, 0.5, *tr.Steps[4].Metrics.CostUSD, 1e-12)
	require.Empty(t, tr.Notes, "the prompts are in the trajectory")
}

// TestMarshalKeepsText: a command's <, > and & are written as they are,
// not as \u003c escapes.
func TestMarshalKeepsText(t *testing.T) {
	evs := readEvents(t, "../testdata/claude/tool.golden.ndjson")
	data, _ := export(t, evs, atif.Meta{})
	require.Contains(t, string(data), `"echo hello-from-tool > out.txt && cat out.txt"`)
	require.NotContains(t, string(data), `\u003e`)
	validate(t, data)
}

// TestSubagent: a Claude sub-agent's messages and tool calls (its
// parent_call_id) are an embedded trajectory, named in its Task call's
// observation; its Grep result is in its own step; its usage (the stream
// reports it with the parent's) is in the parent's steps.
func TestSubagent(t *testing.T) {
	evs := readEvents(t, "../testdata/claude/subagent-maxturns.golden.ndjson")
	data, tr := export(t, evs, atif.Meta{})
	validate(t, data)
	require.NoError(t, atif.Check(tr, evs))
	require.Len(t, tr.SubagentTrajectories, 1)
	sub := tr.SubagentTrajectories[0]
	require.Equal(t, evs[0].Run+"/toolu_03Task", sub.TrajectoryID)
	require.Len(t, sub.Steps, 2)
	require.Equal(t, "Searching for the port setting.", sub.Steps[0].Message)
	require.Equal(t, "toolu_03Grep", sub.Steps[0].Observation.Results[0].SourceCallID)
	require.Equal(t, "The port is set in config.toml, line 3.", sub.Steps[1].Message)
	task := tr.Steps[0].Observation.Results[0]
	require.Equal(t, "toolu_03Task", task.SourceCallID)
	require.Equal(t, []atif.SubagentTrajectoryRef{{TrajectoryID: sub.TrajectoryID}}, task.SubagentTrajectoryRef)
	for _, s := range sub.Steps {
		require.Nil(t, s.Metrics)
	}
}
