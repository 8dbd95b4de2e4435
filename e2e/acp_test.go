package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/mockmodel"
)

// acpBinaries are the ACP commands of the four agents, installed by
// scripts/agents.sh from agents.lock.
var acpBinaries = map[string]string{"claude": "claude-agent-acp", "codex": "codex-acp", "gemini": "gemini", "opencode": "opencode"}

// requireACPUsage holds the usage to what each agent's ACP answer carries:
// Claude and Gemini report the turn's exact totals; codex-acp reports
// none (only context occupancy); OpenCode's covers its last model call
// only, so harness reports none.
func requireACPUsage(t *testing.T, o outcome, calls int) {
	t.Helper()
	switch o.agent {
	case "claude", "gemini":
		requireUsage(t, o, calls)
	default:
		u := o.result.Usage
		u.CostUSD, u.CostEstimated = 0, false
		require.True(t, u.IsZero(), "%s reports no usage over ACP\n%s", o.agent, o)
		require.Empty(t, o.all(event.TypeUsage))
	}
}

func TestACPRealAgents(t *testing.T) {
	for _, agent := range agents {
		t.Run(agent, func(t *testing.T) {
			_, err := os.Stat(filepath.Join(agentsDir, "node_modules", ".bin", acpBinaries[agent]))
			require.NoError(t, err, "run 'make agents': %s is pinned in agents.lock", acpBinaries[agent])
			acp := func(t *testing.T, scenario string, extra ...string) outcome {
				return run(t, agent, scenario, append([]string{"--protocol", "acp", "--linger", "1s"}, extra...)...)
			}
			t.Run("text", func(t *testing.T) {
				o := acp(t, "text")
				require.Equal(t, 0, o.code, "%s", o)
				require.Equal(t, event.ResultSuccess, o.result.Status)
				require.Equal(t, mockmodel.TextAnswer, o.result.Text, "%s", o)
				require.NotEmpty(t, o.result.SessionID)
				requireACPUsage(t, o, 1)
			})
			t.Run("tool", func(t *testing.T) {
				o := acp(t, "tool")
				require.Equal(t, 0, o.code, "%s", o)
				require.Equal(t, "hello-from-tool\n", readFile(t, filepath.Join(o.workdir, "out.txt")))
				ends := o.toolEnds()
				require.Len(t, ends, 1, "%s", o)
				require.Equal(t, event.KindShell, ends[0].Kind)
				require.Equal(t, event.StatusOK, ends[0].Status)
				require.Equal(t, mockmodel.ToolAnswer, o.result.Text)
				requireACPUsage(t, o, 2)
			})
			t.Run("edit", func(t *testing.T) {
				o := acp(t, "edit")
				require.Equal(t, 0, o.code, "%s", o)
				require.Equal(t, mockmodel.EditContent, readFile(t, filepath.Join(o.workdir, mockmodel.EditPath)))
				ends := o.toolEnds()
				require.Len(t, ends, 1, "%s", o)
				require.Contains(t, []event.Kind{event.KindWrite, event.KindEdit}, ends[0].Kind)
				require.Equal(t, event.StatusOK, ends[0].Status)
				require.NotEmpty(t, ends[0].Paths, "%s", o)
				require.Contains(t, ends[0].Paths[0], mockmodel.EditPath)
				require.Equal(t, mockmodel.EditAnswer, o.result.Text)
				requireACPUsage(t, o, 2)
				if agent == "opencode" {
					// opencode acp names the file only once it has written
					// it, and sends no diff content: the content before is
					// unknown, and harness says so rather than guess.
					require.Equal(t, event.DiffSkippedUnknown, ends[0].DiffSkipped, "%s", o)
					return
				}
				requireDiffsApply(t, o, map[string]string{})
			})
			t.Run("hang", func(t *testing.T) {
				o := acp(t, "hang", "--idle-timeout", "10s")
				require.Equal(t, 124, o.code, "%s", o)
				require.Equal(t, event.ResultTimeout, o.result.Status)
				var codes []string
				for _, b := range o.all(event.TypeError) {
					codes = append(codes, b.(*event.Error).Code)
				}
				require.Contains(t, codes, event.ErrIdleTimeout)
				require.NotEmpty(t, o.result.SessionID, "the session was set up: the prompt hung\n%s", o)
				require.Empty(t, o.result.Text, "an answer cut off mid-sentence is not the answer\n%s", o)
			})
		})
	}
}
