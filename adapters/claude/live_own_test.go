package claude

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// ownTurn is what the scripted model served the turns of
// testdata/live/bg-notice.jsonl and bg-fold.jsonl: the first prompt's
// two calls, the CLI's own turn at the end of the background command, and
// the second prompt's answer; and the CLI's last total_cost_usd.
var ownTurn = struct {
	first, own, second event.Usage
	cost               float64
}{
	first:  event.Usage{InputTokens: 24, OutputTokens: 7},
	own:    event.Usage{InputTokens: 17, OutputTokens: 7},
	second: event.Usage{InputTokens: 19, OutputTokens: 9},
	cost:   0.0005250000000000001,
}

// transcript reads testdata/live/NAME.jsonl as lines.
func transcript(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/live/" + name + ".jsonl")
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// play runs lines through liveRunWith and returns the stream's bodies and
// what went to the CLI's stdin; it holds the stream to its invariants.
func play(t *testing.T, lines []string, ready func(*Conversation)) ([]event.Body, string) {
	t.Helper()
	out, stdin := liveRunWith(t, []byte(strings.Join(lines, "\n")+"\n"), false, ready)
	adaptertest.CheckStream(t, out)
	evs, err := event.ReadAll(bytes.NewReader(out))
	require.NoError(t, err)
	bodies := make([]event.Body, len(evs))
	for i, ev := range evs {
		bodies[i] = ev.Body
	}
	return bodies, string(stdin)
}

// requireOwnTurn checks the turns of a session whose CLI began a turn of
// its own between the caller's two: three turns, the middle one the
// CLI's (origin agent, no prompt), each with its answer and the usage the
// model served it; the session's usage their sum and its cost the CLI's
// last total. The CLI's own answer was taken for the second prompt's, and
// its usage dropped (the session's 41/14 where the model served 60/23).
func requireOwnTurn(t *testing.T, bodies []event.Body, ownUsage, secondUsage event.Usage, ownText string) {
	t.Helper()
	starts, ends := only[*event.TurnStart](bodies), only[*event.TurnEnd](bodies)
	require.Len(t, starts, 3)
	require.Len(t, ends, 3)
	require.Equal(t, []string{"turn_1", "agent_1", "turn_2"}, []string{starts[0].TurnID, starts[1].TurnID, starts[2].TurnID})
	require.Equal(t, []string{"", event.OriginAgent, ""}, []string{starts[0].Origin, starts[1].Origin, starts[2].Origin})
	require.Empty(t, starts[1].Prompt, "no prompt of the caller's began it")
	require.Equal(t, "Then say hello (second-mark).", starts[2].Prompt)
	require.Equal(t, []string{"Started it.", ownText, "Hello again."}, []string{ends[0].Text, ends[1].Text, ends[2].Text})
	require.Equal(t, ownTurn.first, tokens(ends[0].Usage))
	require.Equal(t, ownUsage, tokens(ends[1].Usage))
	require.Equal(t, secondUsage, tokens(ends[2].Usage))
	res := bodies[len(bodies)-1].(*event.Result)
	require.Equal(t, "Hello again.", res.Text)
	var all event.Usage
	all.Add(ownTurn.first)
	all.Add(ownTurn.own)
	all.Add(ownTurn.second)
	require.Equal(t, all, tokens(res.Usage), "what the model served")
	require.NotNil(t, res.CostUSD)
	require.Equal(t, ownTurn.cost, *res.CostUSD, "the CLI's last total_cost_usd")
}

// TestLiveOwnTurn: the real CLI ends a background command (Bash
// run_in_background) after the first turn and answers its notification in
// a turn of its own; the caller's next prompt comes while that turn runs.
// That turn is one of the stream's, origin agent; the prompt waits in
// harness for its end (the CLI never sees it during that turn) and is
// the next turn. The second turn used to end with the CLI's own answer and
// usage, and the prompt's answer came after it, outside every turn.
func TestLiveOwnTurn(t *testing.T) {
	lines := transcript(t, "bg-notice")
	t.Run("prompt-during-its-turn", func(t *testing.T) {
		bodies, stdin := play(t, lines, func(c *Conversation) { c.prefix = testPrefix })
		requireOwnTurn(t, bodies, ownTurn.own, ownTurn.second, "The job is done.")
		require.Equal(t, 2, strings.Count(stdin, `"type":"user"`))
	})
	t.Run("prompt-held-till-its-end", func(t *testing.T) {
		c := NewConversation()
		c.prefix = testPrefix
		c.Converse(false)
		var in bytes.Buffer
		require.NoError(t, c.Begin(&in, adapters.Task{}))
		for _, l := range lines {
			if prompt, ok := strings.CutPrefix(l, ">>> prompt "); ok {
				bodies, err := c.Prompt(prompt)
				require.NoError(t, err)
				require.Empty(t, bodies)
				continue
			}
			before := strings.Count(in.String(), `"type":"user"`)
			bodies, _ := c.Parse(nil, []byte(l))
			if strings.Contains(l, `"origin":{"kind":"task-notification"`) {
				require.Equal(t, 1, before, "the second prompt waited for the end of the CLI's turn")
				require.Equal(t, 2, strings.Count(in.String(), `"type":"user"`), "and went at its result")
				require.IsType(t, &event.TurnEnd{}, bodies[len(bodies)-1], "the CLI's turn ended")
				require.True(t, c.Busy(), "the CLI owes the prompt its turn")
			}
		}
		c.End()
		require.True(t, c.Done())
	})
	t.Run("prompt-before-its-turn", func(t *testing.T) {
		// The prompt goes out as the CLI begins its own turn, before
		// harness has read a line of it: the CLI queues it, and its
		// command_lifecycle started comes after that turn's result.
		moved := movePrompt(lines, `"subtype":"task_notification"`)
		bodies, stdin := play(t, moved, func(c *Conversation) { c.prefix = testPrefix })
		requireOwnTurn(t, bodies, ownTurn.own, ownTurn.second, "The job is done.")
		require.Equal(t, 2, strings.Count(stdin, `"type":"user"`))
	})
	t.Run("replayed", func(t *testing.T) {
		// sessions reparse: the Conversation writes nowhere with uuids of
		// its own, and learns the logged session's from its lines.
		live, _ := play(t, lines, func(c *Conversation) { c.prefix = testPrefix })
		replayed, _ := play(t, lines, func(c *Conversation) { c.Replay() })
		require.Equal(t, live, replayed)
	})
	t.Run("replayed-record-cut", func(t *testing.T) {
		// A damaged log whose record lost the second prompt: the CLI
		// starts a message the replay never sent, and that turn is no
		// turn of the stream (not one of the CLI's own).
		cut := slices.Clone(lines)
		cut = slices.DeleteFunc(cut, func(l string) bool { return strings.HasPrefix(l, ">>> prompt Then") })
		bodies, _ := play(t, cut, func(c *Conversation) { c.Replay() })
		starts := only[*event.TurnStart](bodies)
		require.Len(t, starts, 2)
		require.Equal(t, "agent_1", starts[1].TurnID)
		require.Equal(t, "The job is done.", only[*event.TurnEnd](bodies)[1].Text)
	})
	t.Run("interrupt-its-turn", func(t *testing.T) {
		c := NewConversation()
		c.prefix = testPrefix
		c.Converse(false)
		var in bytes.Buffer
		require.NoError(t, c.Begin(&in, adapters.Task{}))
		for _, l := range lines {
			if prompt, ok := strings.CutPrefix(l, ">>> prompt "); ok {
				_, err := c.Prompt(prompt)
				require.NoError(t, err)
				break
			}
			c.Parse(nil, []byte(l))
		}
		require.True(t, c.Cancel(), "the CLI's own turn is the turn in flight")
		require.Contains(t, in.String(), `"subtype":"interrupt"`)
	})
	t.Run("no-lifecycle", func(t *testing.T) {
		// A log of a session whose messages had no uuid (harness before
		// it gave them one): with no command_lifecycle, a turn begun
		// with no prompt awaiting cannot be told from the turn of a
		// prompt the record lost (a damaged log), and is no turn, as
		// before; the prompt written during it still gets its own
		// answer, at the next init.
		old := slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return strings.Contains(l, `"command_lifecycle"`) })
		bodies, _ := play(t, old, func(c *Conversation) { c.prefix = testPrefix })
		ends := only[*event.TurnEnd](bodies)
		require.Len(t, ends, 2)
		require.Equal(t, "Hello again.", ends[1].Text)
		require.Equal(t, ownTurn.second, tokens(ends[1].Usage))
	})
}

// TestLiveOwnTurnFold: a message of the default priority (harness sends
// priority later) that the CLI takes into a turn of its own between two
// model calls ends that turn there, and is the next: the CLI's one result
// totals both, and the prompt's turn has its part of it.
func TestLiveOwnTurnFold(t *testing.T) {
	bodies, _ := play(t, transcript(t, "bg-fold"), func(c *Conversation) { c.prefix = testPrefix })
	requireOwnTurn(t, bodies, ownTurn.own, ownTurn.second, "")
}

// movePrompt moves the second prompt of lines to just before the first
// line that holds at, after the first prompt.
func movePrompt(lines []string, at string) []string {
	out := slices.Clone(lines)
	var prompt string
	for i, l := range out {
		if i > 0 && strings.HasPrefix(l, ">>> prompt ") {
			prompt = l
			out = slices.Delete(out, i, i+1)
			break
		}
	}
	for i, l := range out {
		if strings.Contains(l, at) {
			return slices.Insert(out, i, prompt)
		}
	}
	return out
}
