package acpserver

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os/exec"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
)

// TestPlanMCP: which of a session's MCP servers its agent gets, and a
// warning naming each one it does not.
func TestPlanMCP(t *testing.T) {
	stdio := func(name string, env ...acpsdk.EnvVariable) acpsdk.McpServer {
		return acpsdk.McpServer{Stdio: &acpsdk.McpServerStdio{Name: name, Command: "srv", Args: []string{}, Env: env}}
	}
	servers := []acpsdk.McpServer{stdio("a"), stdio("a"), stdio("b.c"), stdio("d", acpsdk.EnvVariable{Name: "X-Y", Value: "v"}),
		{Sse: &acpsdk.McpServerSseInline{Type: "sse", Name: "e", Url: "http://127.0.0.1:1"}}}
	for _, tc := range []struct {
		name   string
		task   harness.Task
		passed []string
		warned []string
	}{
		{"claude", harness.Task{Agent: "claude"}, []string{"a", "b.c", "d"}, []string{"server=a", "server=e type=sse"}},
		{"codex", harness.Task{Agent: "codex", Protocol: harness.ProtocolCLI}, []string{"a"}, []string{"server=b.c", "server=d", "server=e"}},
		{"claude-over-acp", harness.Task{Agent: "claude", Protocol: harness.ProtocolACP}, nil, []string{"server=a agent=claude protocol=acp", "server=d"}},
		{"gemini", harness.Task{Agent: "gemini"}, nil, []string{"server=a agent=gemini protocol=cli"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			plan := planMCP(tc.task, servers, slog.New(slog.NewTextHandler(&logs, nil)))
			var passed []string
			for _, s := range plan.servers {
				passed = append(passed, s.Name)
			}
			if plan.way == nil {
				passed = nil
			}
			require.Equal(t, tc.passed, passed)
			for _, w := range tc.warned {
				require.Contains(t, logs.String(), w)
			}
			require.Equal(t, len(servers)-len(tc.passed), strings.Count(logs.String(), "level=WARN"), logs.String())
		})
	}
}

// TestCodexMCPStart: the command codex is given for a server runs the
// server's command with its arguments and environment, quotes and all,
// none of which is in codex's arguments.
func TestCodexMCPStart(t *testing.T) {
	task := harness.Task{Agent: "codex"}
	plan := mcpPlan{way: codexMCP, servers: []acpsdk.McpServerStdio{{Name: "s", Command: "sh",
		Args: []string{"-c", `printf '%s|%s|%s' "$TOKEN" "$1" "$2"`, "sh", "it's", "$HOME and \\n"},
		Env:  []acpsdk.EnvVariable{{Name: "TOKEN", Value: `sec'"ret $x`}}}}}
	files, err := plan.apply(&task)
	require.NoError(t, err)
	defer files.remove()
	require.Len(t, task.ExtraArgs, 4)
	require.Equal(t, []string{"-c", `mcp_servers.s.command="/bin/sh"`, "-c"}, task.ExtraArgs[:3])
	require.NotContains(t, strings.Join(task.ExtraArgs, " "), "sec'")
	list, ok := strings.CutPrefix(task.ExtraArgs[3], "mcp_servers.s.args=")
	require.True(t, ok)
	var args []string
	require.NoError(t, json.Unmarshal([]byte(list), &args))
	out, err := exec.Command("/bin/sh", args...).Output()
	require.NoError(t, err)
	require.Equal(t, `sec'"ret $x|it's|$HOME and \n`, string(out))
}
