package harness_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/logger"
)

// codexCapture is a fake that plays a codex-acp 2 capture (its argument):
// its answers to initialize, session/new and session/prompt (each
// prompt), with the lines before each, and {} to session/set_mode, whose
// mode it writes to modeFile in its directory.
const codexCapture, modeFile = "acp-codex-capture", "set_mode.txt"

func init() { fakeagent.Register(codexCapture, runCodexCapture) }

func runCodexCapture(args []string) int {
	data, err := os.ReadFile(args[0])
	if err != nil {
		return 2
	}
	// The capture's lines up to each answer: initialize, session/new,
	// session/prompt.
	var parts [][][]byte
	var part [][]byte
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		part = append(part, line)
		var m map[string]json.RawMessage
		if json.Unmarshal(line, &m) == nil && m["id"] != nil && m["method"] == nil {
			parts, part = append(parts, part), nil
		}
	}
	if len(parts) != 3 {
		return 2
	}
	play := func(lines [][]byte, id json.RawMessage) {
		for i, line := range lines {
			if i == len(lines)-1 {
				var m map[string]json.RawMessage
				json.Unmarshal(line, &m)
				m["id"] = id
				line, _ = json.Marshal(m)
			}
			fakeagent.Line(string(line))
		}
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ModeID string `json:"modeId"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil {
			continue
		}
		switch m.Method {
		case "initialize":
			play(parts[0], m.ID)
		case "session/new":
			play(parts[1], m.ID)
		case "session/set_mode":
			if os.WriteFile(modeFile, []byte(m.Params.ModeID), 0o600) != nil {
				return 2
			}
			fakeagent.Line(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`)
		case "session/prompt":
			play(parts[2], m.ID)
		}
	}
	return 0
}

// TestReparseLogWithoutSetMode: codex-acp 2 offers agent-full-access and
// read-only, which harness sets for full-access and ask; before it
// recorded a log's permissions it set neither (it knew codex-acp's
// "full-access" and an ask mode "default"), so such a log has no
// set_mode answer and its prompts have the ids one lower. Its reparse
// gives the recorded stream (the replay's set_mode took the first
// prompt's answer for its own: turn 1 lost its start and text before its
// tool call, turn 2 ended in error), and so does the reparse of the log
// as harness writes it now.
func TestReparseLogWithoutSetMode(t *testing.T) {
	t.Parallel()
	capture, err := filepath.Abs("acp/testdata/codex-tool.jsonl")
	require.NoError(t, err)
	for _, tc := range []struct{ name, permissions, mode string }{
		{"full-access", "", "agent-full-access"},
		{"ask", harness.Ask, "read-only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			argv, env := fakeagent.Command(codexCapture, capture)
			logs, b := t.TempDir(), replayBudgets()
			st := harness.Settings{LogDir: logs}
			cwd := t.TempDir()
			task := harness.Task{Agent: "fake-acp", Protocol: harness.ProtocolACP, Command: argv, BaseEnv: env,
				Cwd: cwd, Model: "m-1", Permissions: tc.permissions, Budgets: &b}
			rec := &liveRec{}
			s, err := st.StartSession(context.Background(), task, harness.SessionOptions{Options: rec.options()})
			require.NoError(t, err)
			sendTwo(t, s)
			res, err := s.Close()
			require.NoError(t, err)
			checkLive(t, rec)
			recorded := rec.stream()
			require.Equal(t, event.ResultSuccess, res.Status, "%s", recorded)
			for _, e := range rec.find(event.TypeTurnEnd) {
				require.Equal(t, event.ResultSuccess, e.(*event.TurnEnd).Status, "%s", recorded)
			}
			require.Len(t, rec.find(event.TypeTurnEnd), 2)

			m, err := logger.Load(logs, s.RunID())
			require.NoError(t, err)
			require.NotEmpty(t, m.Permissions)
			require.Equal(t, harnesstest.ReparseParts(t, recorded), harnesstest.ReparseParts(t, reparse(t, logs, m, nil)),
				"the log as harness writes it now")

			// The log as harness wrote it before it recorded the
			// permissions: no set_mode answer (request 3), the prompts 3
			// and 4, no permissions in the meta.
			native, err := logger.ReadFile(logs, m.Run, logger.ExtNative)
			require.NoError(t, err)
			var old bytes.Buffer
			answers := 0
			for _, line := range bytes.SplitAfter(native, []byte("\n")) {
				var msg map[string]json.RawMessage
				if json.Unmarshal(line, &msg) != nil || msg["id"] == nil || msg["method"] != nil {
					old.Write(line)
					continue
				}
				answers++
				id, err := strconv.Atoi(string(msg["id"]))
				require.NoError(t, err)
				require.Equal(t, answers, id, "the agent answers harness's requests in order")
				if id == 3 {
					require.JSONEq(t, `{}`, string(msg["result"]), "set_mode's answer")
					continue
				}
				if id > 3 {
					msg["id"] = json.RawMessage(strconv.Itoa(id - 1))
				}
				b, err := json.Marshal(msg)
				require.NoError(t, err)
				old.Write(append(b, '\n'))
			}
			require.Equal(t, 5, answers, "initialize, session/new, set_mode and two prompts")
			mode, err := os.ReadFile(filepath.Join(cwd, modeFile))
			require.NoError(t, err)
			require.Equal(t, tc.mode, string(mode))
			require.NoError(t, os.WriteFile(logger.Path(logs, m.Run, logger.ExtNative), old.Bytes(), 0o600))
			m.Permissions = ""
			reparsed := reparse(t, logs, m, nil)
			require.Equal(t, withoutSetMode(t, recorded), harnesstest.ReparseParts(t, reparsed), "the log as harness wrote it before")
		})
	}
}

// withoutSetMode is the stream harness recorded of a session whose
// set_mode answer was not there (ReparseParts): the same events (the
// answer made none), the result counting one native line fewer.
func withoutSetMode(t *testing.T, stream []byte) []string {
	t.Helper()
	parts := harnesstest.ReparseParts(t, stream)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(parts[len(parts)-1]), &res))
	require.Equal(t, "result", res["type"])
	stats := res["stats"].(map[string]any)
	stats["native_lines"] = stats["native_lines"].(float64) - 1
	b, err := json.Marshal(res)
	require.NoError(t, err)
	parts[len(parts)-1] = string(b)
	return parts
}
