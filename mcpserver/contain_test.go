package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mcpserver"
)

func init() { fakeagent.Register("mcp-panicking-close", mcpPanickingClose) }

// mcp-panicking-close: a program serving MCP whose Setup gives each run
// an observer whose Close panics for the run of prompt "panic" (Wait
// calls it at the run's end, on the server's goroutine that waits for
// the run). It starts a run of setsid-escapee first, prints the pid of
// the escapee, then the run that panics.
func mcpPanickingClose([]string) int {
	dir, err := os.MkdirTemp("", "mcp-panicking-close")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	escapee := make(chan int, 1)
	srv := mcpserver.New(mcpserver.Options{Roots: []string{dir},
		Limits: mcpserver.Limits{IdleMin: time.Second, IdleMax: time.Minute, HardMin: time.Second, HardMax: time.Minute},
		Setup: func(tk *harness.Task) (harness.Observer, error) {
			fake := tk.Prompt
			if fake == "panic" {
				fake = "exit-0-without-terminal-event"
			}
			argv, env := fakeagent.Command(fake)
			tk.Binary, tk.BaseEnv = argv[0], env
			return harness.Observer{
				OnNative: func(_ string, line []byte) {
					if gjson.GetBytes(line, "subtype").String() == "fake_child" {
						escapee <- int(gjson.GetBytes(line, "pid").Int())
					}
				},
				Close: func(*event.Result) {
					if tk.Prompt == "panic" {
						panic("a bug in an observer's Close")
					}
				}}, nil
		}})
	st, ct := mcp.NewInMemoryTransports()
	go func() { _ = srv.Run(context.Background(), st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, prompt := range []string{"setsid-escapee", "panic"} {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_agent",
			Arguments: map[string]any{"agent": "claude", "prompt": prompt, "wait": "none"}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if prompt == "setsid-escapee" {
			fmt.Println(<-escapee)
		}
	}
	select {} // the panic ends the program
}

// TestRunWaiterPanicEndsTheRuns: a panic in a run's end on the server's
// goroutine that waits for the run (here: the Close of Setup's observer)
// takes the program down with its trace, but every run of it is ended
// first: the sleeper another run's agent started in a session of its
// own is gone.
func TestRunWaiterPanicEndsTheRuns(t *testing.T) {
	t.Parallel()
	harnesstest.RequirePanicEndsRuns(t, "mcp-panicking-close", "panic: a bug in an observer's Close", "the agent's sleeper outlived the server's panic")
}
