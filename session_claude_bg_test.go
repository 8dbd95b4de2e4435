package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mockmodel"
)

// bgScenario: the first prompt's model call starts a background command
// (Bash run_in_background); when it ends, Claude Code answers its
// notification in a turn of its own, a text in two chunks 1.2 s apart;
// the second prompt ("second-mark") has its own answer. Each call's usage
// is its own, so every turn's can be told from the others'.
const bgScenario = `name = "bg-notice"
[[turn]]
text = ["Starting it."]
usage = { input = 11, output = 2 }
[[turn.tool]]
kind = "Bash"
args = { command = "sleep 2; echo ok", run_in_background = true, description = "bg" }
[[turn]]
text = ["Started it."]
usage = { input = 13, output = 5 }
[[turn]]
after = "Background command"
text = ["The job ", "is done."]
delay_ms = 1200
usage = { input = 17, output = 7 }
[[turn]]
after = "second-mark"
text = ["Hello again."]
usage = { input = 19, output = 9 }
`

// realClaudeBinary is the pinned Claude Code of 'make agents' (make test
// installs it): HARNESS_AGENTS_DIR, else the repository's .agents.
func realClaudeBinary(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("HARNESS_AGENTS_DIR")
	if dir == "" {
		dir = ".agents"
	}
	bin, err := filepath.Abs(filepath.Join(dir, "node_modules", ".bin", "claude"))
	require.NoError(t, err)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the real Claude Code is not installed (%v): run 'make agents' (make test does)", err)
	}
	return bin
}

// TestLiveClaudeOwnTurn: the real Claude Code over stream-json, on the
// scripted model, begins a turn of its own when a background command of
// the first turn ends. That turn is a turn of the stream (origin agent),
// with its answer and the usage of its model call; the caller's second
// prompt is the turn after it, with its own answer and usage, whether it
// was sent while Claude's turn ran or after; the session's usage is what
// the model served, and its cost Claude's last total_cost_usd. Before,
// the second turn ended with Claude's own answer and usage (17/7), the
// real answer came after it, outside every turn, and the session's usage
// and cost left out Claude's own turn or the answer.
func TestLiveClaudeOwnTurn(t *testing.T) {
	claude := realClaudeBinary(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the mock's homes
	scenario := filepath.Join(t.TempDir(), "bg.toml")
	require.NoError(t, os.WriteFile(scenario, []byte(bgScenario), 0o644))
	for _, c := range []struct {
		name string
		// after is the native line (part of it) the second prompt waits
		// for: Claude's own turn has begun, or has ended.
		after string
	}{
		{"prompt-during-its-turn", `"text":"The job "`},
		{"prompt-after-its-turn", `"origin":{"kind":"task-notification"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := mockmodel.StartMock(scenario, "")
			require.NoError(t, err)
			defer m.Close()
			dir := t.TempDir()
			task := harness.Task{Agent: "claude", Protocol: harness.ProtocolStreamJSON, Binary: claude, Cwd: dir, Raw: true}
			a, err := harness.Lookup("claude")
			require.NoError(t, err)
			task.Model, task.SetupEnv, err = m.Point("claude", dir, a.Mock)
			require.NoError(t, err)
			b := harness.Budgets{Idle: 60 * time.Second, Hard: 2 * time.Minute, Linger: 10 * time.Second, KillGrace: time.Second}
			task.Budgets = &b
			rec := &liveRec{}
			var st harness.Settings
			s, err := st.StartSession(context.Background(), task, harness.SessionOptions{Options: rec.options()})
			require.NoError(t, err)
			require.NoError(t, s.Send("Run the job in the background."))
			rec.waitFor(t, event.TypeTurnEnd, 1)
			waitNative(t, rec, c.after)
			require.NoError(t, s.Send("Then say hello (second-mark)."))
			// The second prompt's answer, in or out of a turn.
			waitNative(t, rec, `"result":"Hello again."`)
			res, err := s.Close()
			require.NoError(t, err)
			checkLive(t, rec)
			require.Equal(t, event.ResultSuccess, res.Status, "%s", rec.stream())

			starts, ends := rec.find(event.TypeTurnStart), rec.find(event.TypeTurnEnd)
			require.Len(t, ends, 3, "%s", rec.stream())
			type turn struct {
				ID, Origin, Text string
				Usage            event.Usage
			}
			var got []turn
			for i, e := range ends {
				ts, te := starts[i].(*event.TurnStart), e.(*event.TurnEnd)
				got = append(got, turn{ts.TurnID, ts.Origin, te.Text, event.Usage{InputTokens: te.Usage.InputTokens, OutputTokens: te.Usage.OutputTokens}})
			}
			require.Equal(t, []turn{
				{"turn_1", "", "Started it.", event.Usage{InputTokens: 24, OutputTokens: 7}},
				{"agent_1", event.OriginAgent, "The job is done.", event.Usage{InputTokens: 17, OutputTokens: 7}},
				{"turn_2", "", "Hello again.", event.Usage{InputTokens: 19, OutputTokens: 9}},
			}, got, "%s", rec.stream())
			require.Equal(t, "Hello again.", res.Text)
			require.Equal(t, event.Usage{InputTokens: 60, OutputTokens: 23}, event.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens})
			require.NotNil(t, res.CostUSD)
			require.Equal(t, lastCost(t, rec), *res.CostUSD, "Claude's last total_cost_usd, as it reported it")
			requireReparsed(t, rec.stream())
		})
	}
}

// requireReparsed checks that the native lines of a live session of
// Claude Code over stream-json (its stream's native events), parsed with
// what the stream recorded of its turns (sessions reparse), give the
// stream again: the same events, apart from times, the run id and what
// only a process has.
func requireReparsed(t *testing.T, recorded []byte) {
	t.Helper()
	evs, err := event.ReadAll(bytes.NewReader(recorded))
	require.NoError(t, err)
	var native bytes.Buffer
	for _, ev := range evs {
		if n, ok := ev.Body.(*event.Native); ok && n.Stream == event.StreamStdout {
			native.Write(n.Line)
			native.WriteByte('\n')
		}
	}
	rec, err := harness.ReadSessionRecord(bytes.NewReader(recorded))
	require.NoError(t, err)
	var out bytes.Buffer
	enc := event.NewEncoder(&out)
	_, err = harness.Parse(context.Background(), &native, "claude", func(ev event.Event) { enc.Encode(ev) },
		harness.ParseOptions{Protocol: harness.ProtocolStreamJSON, Session: rec})
	require.NoError(t, err)
	require.NoError(t, event.CheckNDJSON(out.Bytes()), "%s", out.Bytes())
	require.Equal(t, withoutNative(t, recorded), withoutNative(t, out.Bytes()))
}

// withoutNative is harnesstest.ReparseParts of stream without its native
// events and the events' seq (which count them).
func withoutNative(t *testing.T, stream []byte) []string {
	t.Helper()
	var out []string
	for _, part := range harnesstest.ReparseParts(t, stream) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(part), &m))
		if m["type"] == string(event.TypeNative) {
			continue
		}
		delete(m, "seq")
		b, err := json.Marshal(m)
		require.NoError(t, err)
		out = append(out, string(b))
	}
	return out
}

// waitNative waits for a native line of the agent's that holds part.
// The bound only turns a hang into a failure.
func waitNative(t *testing.T, rec *liveRec, part string) {
	t.Helper()
	bound := time.After(60 * time.Second)
	for {
		for _, b := range rec.find(event.TypeNative) {
			if strings.Contains(string(b.(*event.Native).Line), part) {
				return
			}
		}
		select {
		case <-rec.signal:
		case <-bound:
			t.Fatalf("no native line with %s; stream so far:\n%s", part, rec.stream())
		}
	}
}

// lastCost is the total_cost_usd of the last result line Claude printed.
func lastCost(t *testing.T, rec *liveRec) float64 {
	t.Helper()
	var cost *float64
	for _, b := range rec.find(event.TypeNative) {
		var line struct {
			Type string   `json:"type"`
			Cost *float64 `json:"total_cost_usd"`
		}
		if json.Unmarshal(b.(*event.Native).Line, &line) == nil && line.Type == "result" && line.Cost != nil {
			cost = line.Cost
		}
	}
	require.NotNil(t, cost, "no result line with a cost")
	return *cost
}

// hangScenario streams some text and then stalls: the call's
// message_start said its input (130 tokens), and no message_delta comes.
const hangScenario = `name = "hang"
[[turn]]
text = ["Thinking"]
hang = true
usage = { input = 130, output = 9 }
`

// TestLiveClaudeStoppedMidCall: the real Claude Code over stream-json is
// stopped while its model call stalls (the idle watchdog, or a SIGKILL):
// the call's input, which its message_start gave and the model read, is
// the turn's usage and the session's. Both were {}: the usage of a call
// was counted only at its message_stop.
func TestLiveClaudeStoppedMidCall(t *testing.T) {
	claude := realClaudeBinary(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the mock's homes
	scenario := filepath.Join(t.TempDir(), "hang.toml")
	require.NoError(t, os.WriteFile(scenario, []byte(hangScenario), 0o644))
	for _, c := range []struct {
		name   string
		idle   time.Duration
		kill   bool
		errIs  error
		status string
	}{
		{name: "idle-timeout", idle: 2 * time.Second, errIs: harness.ErrIdleTimeout, status: event.ResultTimeout},
		{name: "killed", idle: time.Minute, kill: true, status: event.ResultError},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := mockmodel.StartMock(scenario, "")
			require.NoError(t, err)
			defer m.Close()
			dir := t.TempDir()
			task := harness.Task{Agent: "claude", Protocol: harness.ProtocolStreamJSON, Binary: claude, Cwd: dir}
			a, err := harness.Lookup("claude")
			require.NoError(t, err)
			task.Model, task.SetupEnv, err = m.Point("claude", dir, a.Mock)
			require.NoError(t, err)
			b := harness.Budgets{Idle: c.idle, IdleWarning: c.idle / 2, Hard: 2 * time.Minute, Linger: time.Second, KillGrace: time.Second}
			task.Budgets = &b
			rec := &liveRec{}
			var st harness.Settings
			s, err := st.StartSession(context.Background(), task, harness.SessionOptions{Options: rec.options()})
			require.NoError(t, err)
			require.NoError(t, s.Send("Think hard."))
			rec.waitFor(t, event.TypeTextDelta, 1)
			if c.kill {
				pid := rec.find(event.TypeSessionStart)[0].(*event.SessionStart).PID
				require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
			}
			res, err := s.Wait()
			if c.errIs != nil {
				require.ErrorIs(t, err, c.errIs)
			}
			checkLive(t, rec)
			require.Equal(t, c.status, res.Status)
			ends := rec.find(event.TypeTurnEnd)
			require.Len(t, ends, 1, "%s", rec.stream())
			want := event.Usage{InputTokens: 130}
			end := ends[0].(*event.TurnEnd)
			require.Equal(t, want, event.Usage{InputTokens: end.Usage.InputTokens, OutputTokens: end.Usage.OutputTokens}, "%s", rec.stream())
			require.Equal(t, want, event.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens})
		})
	}
}

// TestParseSessionRecordOwnTurn: the captured sessions in which Claude
// Code began a turn of its own (adapters/claude/testdata/live: the
// caller's prompt during that turn, and one it took into that turn) reparse
// to their recorded streams: the turn the agent began is found in the
// lines again, and the recorded prompts go to the turns of the caller.
func TestParseSessionRecordOwnTurn(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"bg-notice", "bg-fold"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			recorded, err := os.ReadFile(filepath.Join("adapters", "claude", "testdata", "live", name+".golden.ndjson"))
			require.NoError(t, err)
			recorded, _, _ = bytes.Cut(recorded, []byte("--- stdin\n"))
			rec, err := harness.ReadSessionRecord(bytes.NewReader(recorded))
			require.NoError(t, err)
			require.True(t, rec.Turns[1].Agent, "the second turn is the agent's own")
			var out bytes.Buffer
			enc := event.NewEncoder(&out)
			_, err = harness.Parse(context.Background(), liveNative(t, "adapters/claude/testdata/live/"+name+".jsonl"), "claude",
				func(ev event.Event) { enc.Encode(ev) }, harness.ParseOptions{Protocol: harness.ProtocolStreamJSON, Session: rec})
			require.NoError(t, err)
			require.NoError(t, event.CheckNDJSON(out.Bytes()), "%s", out.Bytes())
			require.Equal(t, harnesstest.ReparseParts(t, recorded), harnesstest.ReparseParts(t, out.Bytes()))
		})
	}
}
