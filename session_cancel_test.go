package harness

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/claude"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/registry"
)

// TestInterruptNeverLandsOnTheNextTurn: an interrupt asked while turn 1
// is in flight is turn 1's, even when the agent's end of turn 1 arrives
// between the session's check that the turn is in flight and the
// Canceler's request (the stdout goroutine then ends the turn and sends
// the prompt queued behind it, and the request went to turn 2). The
// Canceler of cancelRace delivers that end of turn at that moment,
// whenever nothing holds the session's lock, as the stdout goroutine
// would: so the window is taken every time it is open, with no sleep.
func TestInterruptNeverLandsOnTheNextTurn(t *testing.T) {
	t.Parallel()
	require.NoError(t, registerCancelRace())
	argv, env := fakeagent.Command(fakeagent.ClaudeStream)
	b := Budgets{Idle: 5 * time.Second, IdleWarning: 300 * time.Millisecond, Hard: 20 * time.Second,
		Linger: 10 * time.Second, KillGrace: 100 * time.Millisecond}
	started := make(chan struct{}, 1)
	var ends []string // the turns' statuses, written under the session's lock
	var st Settings
	// hang: the first turn goes on until it is interrupted.
	s, err := st.StartSession(context.Background(), Task{Agent: cancelRaceID, Binary: argv[0],
		BaseEnv: append(env, fakeagent.ClaudeStreamMode+"=hang"), Cwd: t.TempDir(), Budgets: &b},
		SessionOptions{Options: Options{OnEvent: func(ev event.Event) {
			switch v := ev.Body.(type) {
			case *event.Message:
				select {
				case started <- struct{}{}:
				default:
				}
			case *event.TurnEnd:
				ends = append(ends, v.Status)
			}
		}}})
	require.NoError(t, err)
	conv := s.conv.(*cancelRace)
	conv.s = s
	require.NoError(t, s.Send("one"))
	<-started // turn 1 is in flight, and the agent silent
	require.NoError(t, s.Send("two"))
	s.Interrupt()
	res, err := s.Close()
	require.NoError(t, err)
	require.Equal(t, event.ResultSuccess, res.Status)
	sent := conv.sent.lines()
	require.Len(t, sent, 3, "%q", sent)
	require.Contains(t, sent[1], `"subtype":"interrupt"`, "the interrupt goes before the prompt of turn 2: %q", sent)
	require.Contains(t, sent[2], `"content":"two"`)
	require.Equal(t, []string{event.ResultCancelled, event.ResultSuccess}, ends)
}

const cancelRaceID = "cancel-race"

// registerCancelRace registers Claude Code over stream-json whose
// Conversation is a cancelRace, once however often it is called.
var registerCancelRace = sync.OnceValue(func() error {
	return Register(Agent{Info: registry.AgentInfo{ID: cancelRaceID, Binaries: []string{"claude"}}, Driver: cancelRaceDriver{}})
})

type cancelRaceDriver struct{}

func (cancelRaceDriver) Command(binary string, t adapters.Task) (adapters.Command, error) {
	return claude.Live.Command(binary, t)
}

func (cancelRaceDriver) NewParser() adapters.Parser {
	return &cancelRace{Conversation: claude.NewConversation()}
}

// cancelRace is Claude's Conversation whose Cancel first delivers the
// agent's end of the turn in flight if the stdout goroutine could (the
// session's lock is free), and which keeps what it writes to the agent.
type cancelRace struct {
	*claude.Conversation
	s    *Session // set once the session started, before any Cancel
	sent lineLog
}

// endOfTurn is the fake's result line of its first turn.
const endOfTurn = `{"type":"result","subtype":"success","is_error":false,"result":"answer 1","session_id":"fake-1","usage":{"input_tokens":10,"output_tokens":5}}`

func (c *cancelRace) Begin(stdin io.Writer, t adapters.Task) error {
	c.sent.w = stdin
	return c.Conversation.Begin(&c.sent, t)
}

func (c *cancelRace) Cancel() bool {
	if c.s.mu.TryLock() {
		c.s.mu.Unlock()
		c.s.feed(c, nil, []byte(endOfTurn))
	}
	return c.Conversation.Cancel()
}

// lineLog writes through to w and keeps the lines written.
type lineLog struct {
	w   io.Writer
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lineLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	l.buf.Write(b)
	l.mu.Unlock()
	return l.w.Write(b)
}

func (l *lineLog) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSpace(l.buf.String()), "\n")
}
