package oracle

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

func parse(p adapters.Parser, lines ...string) (out []event.Body, unknown int) {
	for _, l := range lines {
		var known bool
		out, known = p.Parse(out, []byte(l))
		if !known {
			unknown++
		}
	}
	return p.Flush(out), unknown
}

func TestOracleIsOneShellCall(t *testing.T) {
	bodies, unknown := parse(Agent.NewParser(), "\x1eharness-oracle start /solution/solve.sh", "hello", "an error", "\x1eharness-oracle exit 3")
	require.Zero(t, unknown)
	require.Len(t, bodies, 3)
	start := bodies[0].(*event.ToolStart)
	require.Equal(t, event.KindShell, start.Kind)
	require.Equal(t, "/solution/solve.sh", start.Command)
	require.JSONEq(t, `{"command":"/solution/solve.sh"}`, string(start.Input))
	end := bodies[1].(*event.ToolEnd)
	require.Equal(t, event.StatusError, end.Status)
	require.Equal(t, 3, *end.ExitCode)
	require.Equal(t, "hello\nan error\n", end.Output)
	res := bodies[2].(*event.Result)
	require.Equal(t, event.ResultError, res.Status)

	bodies, _ = parse(Agent.NewParser(), "\x1eharness-oracle start s", "\x1eharness-oracle exit 0")
	require.Equal(t, event.StatusOK, bodies[1].(*event.ToolEnd).Status)
	require.Equal(t, event.ResultSuccess, bodies[2].(*event.Result).Status)
}

func TestOracleKeepsTheTailOfLongOutput(t *testing.T) {
	p := Agent.NewParser()
	lines := []string{"\x1eharness-oracle start s"}
	for range 2000 {
		lines = append(lines, strings.Repeat("x", 99))
	}
	lines = append(lines, "last", "\x1eharness-oracle exit 0")
	bodies, _ := parse(p, lines...)
	end := bodies[1].(*event.ToolEnd)
	require.True(t, end.OutputTruncated)
	require.LessOrEqual(t, len(end.Output), outputMax)
	require.True(t, strings.HasSuffix(end.Output, "last\n"))
}

func TestOracleNeedsItsScript(t *testing.T) {
	_, err := Agent.Command("bash", adapters.Task{Prompt: "p"})
	require.ErrorIs(t, err, ErrNoScript)
	c, err := Agent.Command("/bin/bash", adapters.Task{Prompt: "p", ExtraArgs: []string{"/solution/solve.sh"}})
	require.NoError(t, err)
	require.Equal(t, "/solution/solve.sh", c.Argv[len(c.Argv)-1])
	require.Equal(t, -1, c.PromptIndex)
}

// TestRefusesWhatItCannotHonour: oracle and nop call no model and run
// with full access: a task asking otherwise is refused, not run as
// something else (the script was run with full access under read-only).
func TestRefusesWhatItCannotHonour(t *testing.T) {
	script := []string{"/solution/solve.sh"}
	for _, a := range []adapters.Agent{Agent, Nop} {
		for want, task := range map[error]adapters.Task{
			ErrReadOnly:     {Permissions: adapters.ReadOnly, ExtraArgs: script},
			ErrMaxTurns:     {MaxTurns: 5, ExtraArgs: script},
			ErrSystemPrompt: {AppendSystemPrompt: "be brief", ExtraArgs: script},
			ErrResume:       {Resume: "abc", ExtraArgs: script},
		} {
			_, err := a.Command("/bin/sh", task)
			require.ErrorIs(t, err, want, a.Name())
		}
		_, err := a.Command("/bin/sh", adapters.Task{Permissions: "yolo", ExtraArgs: script})
		require.ErrorContains(t, err, `unknown permission mode "yolo"`)
		_, err = a.Command("/bin/sh", adapters.Task{Permissions: adapters.FullAccess, Model: "sonnet", ExtraArgs: script})
		require.NoError(t, err, "a bench's models are crossed with every agent: a model is no option of theirs")
	}
}

func TestNopSucceeds(t *testing.T) {
	bodies, unknown := parse(Nop.NewParser(), "\x1eharness-nop")
	require.Zero(t, unknown)
	require.Equal(t, event.ResultSuccess, bodies[0].(*event.Result).Status)
	_, unknown = parse(Nop.NewParser(), "something else")
	require.Equal(t, 1, unknown)
}
