package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/registry"
)

// toy is an agent added the way docs/adding-an-agent.md says: one adapter
// (here in a test file: in the tree it is a package, adapters/toy) and one
// Register call. It speaks the second transport, a session over stdio
// (fakeagent.ToySession's made-up protocol).
var toy = harness.Agent{
	Info:    registry.AgentInfo{ID: "toy", Display: "Toy Agent", Aliases: []string{"toy-agent"}},
	Adapter: toyAdapter{},
}

var registerToy = sync.OnceValue(func() error { return harness.Register(toy) })

type toyAdapter struct{}

func (toyAdapter) Name() string       { return "toy" }
func (toyAdapter) Binaries() []string { return []string{"toy-agent"} }
func (toyAdapter) Command(bin string, t adapters.Task) (adapters.Command, error) {
	// The prompt goes in the session's first request, not on argv.
	return adapters.Command{Argv: []string{bin}, PromptIndex: -1, Session: true}, nil
}
func (toyAdapter) NewParser() adapters.Parser { return &toyParser{} }

// toyParser is the harness's side of the session: it sends the prompt,
// grants the agent's requests in full-access mode only, and is done at
// the end of the turn.
type toyParser struct {
	stdin io.Writer
	allow bool
	done  bool
}

func (p *toyParser) Begin(stdin io.Writer, t adapters.Task) error {
	p.stdin, p.allow = stdin, t.Permissions == adapters.FullAccess
	return p.send(map[string]any{"op": "prompt", "text": t.Prompt})
}

func (p *toyParser) send(m map[string]any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = p.stdin.Write(append(b, '\n'))
	return err
}

func (p *toyParser) Parse(dst []event.Body, line []byte) ([]event.Body, bool) {
	switch gjson.GetBytes(line, "op").String() {
	case "ask": // a request of the agent: answered before the next line
		p.send(map[string]any{"op": "answer", "id": gjson.GetBytes(line, "id").Int(), "allow": p.allow})
		return dst, true
	case "say":
		return append(dst, &event.Message{Role: "assistant", Text: gjson.GetBytes(line, "text").String()}), true
	case "done":
		p.done = true
		return append(dst, &event.Result{Status: event.ResultSuccess, Text: gjson.GetBytes(line, "text").String()}), true
	}
	return dst, false
}

func (p *toyParser) Flush(dst []event.Body) []event.Body { return dst }
func (p *toyParser) Done() bool                          { return p.done }

// TestSessionTransport runs an agent of the second kind through the same
// supervisor as the CLIs: the harness writes the opening request, answers
// the agent's request on its stdin (as the permission mode says), turns
// its notifications into events, and closes stdin at the end of the turn,
// upon which the agent exits by itself (exit 0, no linger, no kill).
func TestSessionTransport(t *testing.T) {
	require.NoError(t, registerToy())
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
	require.NoError(t, registerToy())
	require.Contains(t, harness.AgentNames(), "toy")
	a, err := harness.Adapter("TOY-AGENT")
	require.NoError(t, err)
	require.Equal(t, "toy", a.Name())
	id, ok := registry.Canonical("toy-agent")
	require.True(t, ok)
	require.Equal(t, "toy", id)
	require.Error(t, harness.Register(toy), "taken")
	err = harness.Register(harness.Agent{Info: registry.AgentInfo{ID: "other", Aliases: []string{"claude-code"}}, Adapter: otherAdapter{}})
	require.ErrorContains(t, err, `"claude-code" is taken`)
	require.NotContains(t, harness.AgentNames(), "other")
}

type otherAdapter struct{ toyAdapter }

func (otherAdapter) Name() string { return "other" }
