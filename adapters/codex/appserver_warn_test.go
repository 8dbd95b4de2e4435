package codex

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// Notifications of codex 0.169's app-server that carry a warning for the
// user. The configWarnings and the MCP failure are its lines with a bad
// rules file, two unknown config.toml keys and an MCP server whose command
// does not exist (homes shortened); deprecationNotice is resume.jsonl's.
const (
	deprecationLine  = `{"method":"deprecationNotice","params":{"summary":"Full-history hydration is deprecated for paginated threads; use ` + "`excludeTurns: true`" + `, then page with ` + "`thread/turns/list` and `thread/items/list`" + `.","details":null},"emittedAtMs":1795928556628}`
	rulesWarningLine = `{"method":"configWarning","params":{"summary":"Error parsing rules; custom rules not applied.","details":"failed to parse rules file /h/.codex/rules/default.rules: starlark error: error: Parse error: cannot use reserved keyword ` + "`is`" + `\n --> /h/.codex/rules/default.rules:1:18\n  |\n1 | prefix_rule(this is not valid\n  |                  ^^\n  |\n","path":"/h/.codex/rules/default.rules","range":{"start":{"line":1,"column":18},"end":{"line":1,"column":20}}},"emittedAtMs":1795936379049}`
	unknownKeysLine  = `{"method":"configWarning","params":{"summary":"Codex is ignoring 1 unrecognized configuration settings. Check for typos or deprecated settings.\n  user (/h/.codex/config.toml): ` + "`bogus_key`" + ` is ignored.","details":null},"emittedAtMs":1795936379049}`
	// Codex says the unknown keys again as a warning once the thread starts.
	unknownKeysAgain = `{"method":"warning","params":{"threadId":"01a21188-5573-7943-8473-14f418aa20c3","message":"Codex is ignoring 1 unrecognized configuration settings. Check for typos or deprecated settings.\n  user (/h/.codex/config.toml): ` + "`bogus_key`" + ` is ignored."},"emittedAtMs":1795936379079}`
	mcpStartingLine  = `{"method":"mcpServer/startupStatus/updated","params":{"threadId":"01a21188-5573-7943-8473-14f418aa20c3","name":"bogus","status":"starting","error":null,"failureReason":null},"emittedAtMs":1795936379080}`
	mcpFailedLine    = `{"method":"mcpServer/startupStatus/updated","params":{"threadId":"01a21188-5573-7943-8473-14f418aa20c3","name":"bogus","status":"failed","error":"MCP client for ` + "`bogus`" + ` failed to start: MCP startup failed: No such file or directory (os error 2)","failureReason":null},"emittedAtMs":1795936379082}`
)

const (
	deprecationText = "Full-history hydration is deprecated for paginated threads; use `excludeTurns: true`, then page with `thread/turns/list` and `thread/items/list`."
	unknownKeysText = "Codex is ignoring 1 unrecognized configuration settings. Check for typos or deprecated settings.\n  user (/h/.codex/config.toml): `bogus_key` is ignored."
)

// warnings are the messages of the agent_warning events among bodies.
func warnings(bodies []event.Body) []string {
	var msgs []string
	for _, b := range bodies {
		if w, ok := b.(*event.Warning); ok && w.Code == event.WarnAgentWarning {
			msgs = append(msgs, w.Message)
		}
	}
	return msgs
}

// TestAppServerWarnings: what Codex warns the user of is a
// warning{agent_warning}, each text once; what it says before the thread
// opens follows the session_start, which must come first with the
// thread's id.
func TestAppServerWarnings(t *testing.T) {
	t.Parallel()
	t.Run("before-the-thread", func(t *testing.T) {
		t.Parallel()
		var stdin bytes.Buffer
		c := NewAppServer()
		c.Converse(false)
		require.NoError(t, c.Begin(&stdin, adapters.Task{Cwd: "/w"}))
		bodies, known := exchange(c, initAnswer, rulesWarningLine, unknownKeysLine, deprecationLine, threadAnswer,
			unknownKeysAgain, mcpStartingLine, mcpFailedLine)
		require.Equal(t, []bool{true, true, true, true, true, true, true, true}, known)
		ss, ok := bodies[0].(*event.SessionStart)
		require.True(t, ok, "the session_start first: %#v", bodies[0])
		require.Equal(t, "01a21188-5573-7943-8473-14f418aa20c3", ss.SessionID)
		require.Equal(t, []string{
			"Error parsing rules; custom rules not applied. (failed to parse rules file /h/.codex/rules/default.rules: " +
				"starlark error: error: Parse error: cannot use reserved keyword `is`\n --> /h/.codex/rules/default.rules:1:18\n" +
				"  |\n1 | prefix_rule(this is not valid\n  |                  ^^\n  |)",
			unknownKeysText, // once, though Codex says it twice
			deprecationText,
			"MCP client for `bogus` failed to start: MCP startup failed: No such file or directory (os error 2)",
		}, warnings(bodies))
		require.Len(t, bodies, 5)
	})
	t.Run("in-a-turn", func(t *testing.T) {
		t.Parallel()
		c, _ := open(t, false)
		_, err := c.Prompt("one")
		require.NoError(t, err)
		bodies, known := exchange(c, `{"id":3,"result":{"turn":{"id":"t1"}}}`,
			`{"method":"guardianWarning","params":{"threadId":"x","message":"Automatic approval review denied the command."}}`,
			`{"method":"model/rerouted","params":{"threadId":"x","turnId":"t1","fromModel":"gpt-5.5","toModel":"gpt-5.5-safe","reason":"highRiskCyberActivity"}}`,
			`{"method":"model/rerouted","params":{"threadId":"x","turnId":"t0","fromModel":"gpt-5.5","toModel":"gpt-5.5-safe","reason":"highRiskCyberActivity"}}`,
			`{"method":"deprecationNotice","params":{"summary":"Old.","details":"  Use the new one.\n"}}`,
			`{"method":"configWarning","params":{"summary":"","details":null}}`)
		require.Equal(t, []bool{true, true, true, true, true, true}, known)
		require.Equal(t, []string{
			"Automatic approval review denied the command.",
			"model rerouted: gpt-5.5 -> gpt-5.5-safe (highRiskCyberActivity)", // t0's is an earlier turn's: dropped
			"Old. (Use the new one.)",
		}, warnings(bodies))
	})
	t.Run("thread-refused", func(t *testing.T) {
		t.Parallel()
		// The warning that tells why: before the fatal error.
		var stdin bytes.Buffer
		c := NewAppServer()
		c.Converse(false)
		require.NoError(t, c.Begin(&stdin, adapters.Task{Cwd: "/w"}))
		bodies, _ := exchange(c, initAnswer, unknownKeysLine, `{"error":{"code":-32600,"message":"invalid config"},"id":2}`)
		require.Len(t, bodies, 3)
		require.Equal(t, unknownKeysText, bodies[0].(*event.Warning).Message)
		require.True(t, bodies[1].(*event.Error).Fatal)
		require.Equal(t, event.ResultError, bodies[2].(*event.Result).Status)
	})
	t.Run("capture-without-thread", func(t *testing.T) {
		t.Parallel()
		c := NewAppServer()
		bodies, _ := exchange(c, initAnswer, deprecationLine)
		require.Empty(t, bodies, "held for the session_start")
		require.Equal(t, []string{deprecationText}, warnings(c.Flush(nil)), "the log ended first")
	})
}

// TestAppServerResumeExcludesTurns: thread/resume asks Codex to leave the
// thread's earlier turns out of its answer (excludeTurns): on a long
// thread they made a line past harness's line cap, and the resume failed.
// thread/start has no such parameter.
func TestAppServerResumeExcludesTurns(t *testing.T) {
	t.Parallel()
	for resume, want := range map[string]bool{"": false, resumedThread: true} {
		var stdin bytes.Buffer
		c := NewAppServer()
		require.NoError(t, c.Begin(&stdin, adapters.Task{Cwd: "/w", Resume: resume}))
		exchange(c, initAnswer)
		sent := strings.Split(strings.TrimSpace(stdin.String()), "\n")
		var req struct {
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
		}
		require.NoError(t, json.Unmarshal([]byte(sent[len(sent)-1]), &req))
		require.Equal(t, map[bool]string{false: "thread/start", true: "thread/resume"}[want], req.Method)
		_, has := req.Params["excludeTurns"]
		require.Equal(t, want, has, "%s", sent[len(sent)-1])
		if want {
			require.Equal(t, true, req.Params["excludeTurns"])
		}
	}
}

// TestAppServerResumeBaselineWithoutTurns: the resumed thread's earlier
// usage comes from Codex's thread/tokenUsage/updated, not from the turns
// of the thread/resume answer: an answer without them (as Codex 0.169
// gives it with excludeTurns, checked against the scripted model: turns
// [], the same update right after it, and no deprecationNotice) leaves the
// turns' usage what their calls cost.
func TestAppServerResumeBaselineWithoutTurns(t *testing.T) {
	t.Parallel()
	native, err := os.ReadFile(filepath.Join(appServerData, "resume.jsonl"))
	require.NoError(t, err)
	var lines [][]byte
	for _, l := range bytes.Split(bytes.TrimSpace(native), []byte("\n")) {
		switch {
		case bytes.Contains(l, []byte(`"method":"deprecationNotice"`)):
			continue
		case bytes.HasPrefix(l, []byte(`{"id":2,"result":`)):
			var m map[string]any
			require.NoError(t, json.Unmarshal(l, &m))
			m["result"].(map[string]any)["thread"].(map[string]any)["turns"] = []any{}
			l, err = json.Marshal(m)
			require.NoError(t, err)
		}
		lines = append(lines, l)
	}
	r := replay{prompts: []string{"one", "two"}, resume: resumedThread}
	stream, _ := r.run(t, append(bytes.Join(lines, []byte("\n")), '\n'))
	ends := turnEnds(t, stream)
	require.Len(t, ends, 2)
	require.Equal(t, event.Usage{InputTokens: 240, OutputTokens: 50}, ends[0].Usage)
	require.Equal(t, event.Usage{InputTokens: 120, OutputTokens: 25}, ends[1].Usage)
}
