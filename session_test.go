package harness_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/toyagent"
	"github.com/agentharness/harness/registry"
)

// TestSessionTransport runs an agent of the second kind through the same
// supervisor as the CLIs: the harness writes the opening request, answers
// the agent's request on its stdin (as the permission mode says), turns
// its notifications into events, and closes stdin at the end of the turn,
// upon which the agent exits by itself (exit 0, no linger, no kill).
func TestSessionTransport(t *testing.T) {
	require.NoError(t, toyagent.Register())
	argv, env := fakeagent.Command(fakeagent.ToySession)
	for perm, allowed := range map[string]bool{harness.FullAccess: true, harness.ReadOnly: false} {
		t.Run(perm, func(t *testing.T) {
			var out bytes.Buffer
			var msgs []string
			b := harness.Budgets{Idle: 10 * time.Second, Hard: 30 * time.Second, Linger: 5 * time.Second, KillGrace: time.Second}
			run, err := harness.Start(context.Background(), harness.Task{Agent: "toy-agent", Prompt: "hello", Permissions: perm,
				Binary: argv[0], BaseEnv: env, Cwd: t.TempDir(), Budgets: &b}, harness.Options{
				OnLine: func(l []byte) { out.Write(l) },
				OnEvent: func(ev event.Event) {
					if m, ok := ev.Body.(*event.Message); ok {
						msgs = append(msgs, m.Text)
					}
				}})
			require.NoError(t, err)
			res, err := run.Wait()
			require.NoError(t, err)
			require.Equal(t, event.ResultSuccess, res.Status)
			require.Equal(t, "finished", res.Text)
			require.False(t, res.LingeredAfterDone, "the agent exits when stdin closes, not at the end of the linger budget")
			require.NotNil(t, res.ExitCode)
			require.Equal(t, 0, *res.ExitCode)
			require.Equal(t, []string{fmt.Sprintf("prompt %q, allowed=%v", "hello", allowed)}, msgs)
			adaptertest.CheckStream(t, out.Bytes())
		})
	}
}

// TestRegister: a registered agent is known by id and alias everywhere
// (the library, the registry the configuration checks names with), and a
// name can be taken only once.
func TestRegister(t *testing.T) {
	require.NoError(t, toyagent.Register())
	require.Contains(t, harness.AgentNames(), "toy")
	a, err := harness.Adapter("TOY-AGENT")
	require.NoError(t, err)
	require.Equal(t, "toy", a.Name())
	id, ok := registry.Canonical("toy-agent")
	require.True(t, ok)
	require.Equal(t, "toy", id)
	got, err := harness.Lookup("toy-agent")
	require.NoError(t, err)
	require.Equal(t, "Toy Agent", got.Info.Display)
	require.NotNil(t, got.Mock, "the registration's mock wiring is kept")
	require.Equal(t, []string{"toy-agent"}, a.Binaries(), "an agent's binaries are its Info's")
	builtin, err := harness.Lookup("claude")
	require.NoError(t, err)
	require.Equal(t, "Claude Code", builtin.Info.Display)
	require.Equal(t, []string{"claude"}, builtin.Binaries())
	require.Error(t, harness.Register(toyagent.Agent), "taken")
	other := harness.Agent{Info: registry.AgentInfo{ID: "other", Aliases: []string{"claude-code"}, Binaries: []string{"other"}},
		Driver: toyagent.Adapter{}}
	require.ErrorContains(t, harness.Register(other), `"claude-code" is taken`)
	other.Info.Aliases = nil
	other.Driver = nil
	require.ErrorContains(t, harness.Register(other), "needs a Driver")
	require.NotContains(t, harness.AgentNames(), "other")
}
