package serve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/process"
	"github.com/agentharness/harness/serve"
)

// TestKillGraceBounded: a client may shorten the configured kill grace,
// not lengthen it. A shutdown waits a run's grace: a kill_grace of
// 100000h was taken (201), and held the server's shutdown that long.
func TestKillGraceBounded(t *testing.T) {
	f := newFixture(t, "serve-gated") // configured kill grace: 1s
	f.openGate(t)
	for _, g := range []string{"100000h", "1001ms"} {
		st, b := f.post(t, "/api/runs", `{"agent":"claude","prompt":"x","budgets":{"kill_grace":"`+g+`"}}`)
		require.Equal(t, http.StatusBadRequest, st, b)
		require.Contains(t, b, "budgets.kill_grace")
		require.Contains(t, b, "at most the server's kill grace, 1s")
	}
	for _, g := range []string{"1s", "200ms", "0"} {
		run := f.api.Start(t, `{"agent":"claude","prompt":"x","cwd":`+strconv.Quote(t.TempDir())+`,"budgets":{"kill_grace":"`+g+`"}}`).Run
		waitStatus(t, f, run)
	}
}

// deafFixture is a server whose runs (or ACP sessions, fake-acp) are
// agents deaf to SIGINT and SIGTERM, with a kill grace of 1m: an
// interrupt ends them a minute later.
func deafFixture(t *testing.T, session bool, killAfter time.Duration) *fixture {
	t.Helper()
	fake := "ignore-sigterm"
	if session {
		fake = "acp-agent"
	}
	argv, _ := fakeagent.Command("acp-agent", "ignore-all")
	return newFixtureWith(t, fake, func(cfg *serve.Config) {
		cfg.Launcher.Settings.Config.KillGrace = config.Duration(time.Minute)
		cfg.Launcher.Settings.Config.Agents["fake-acp"] = config.AgentConfig{Protocol: "acp", Command: argv}
		cfg.KillAfter = killAfter
	})
}

// startDeaf starts a run (or a live session in a tool call) of a deaf
// agent and returns its id and the agent's pid, once it is running.
func (f *fixture) startDeaf(t *testing.T, session bool) (string, int) {
	t.Helper()
	body := `{"agent":"claude","prompt":"x","cwd":` + strconv.Quote(t.TempDir()) + `}`
	wait := "session_start"
	if session {
		body = `{"agent":"fake-acp","session":true,"prompt":"x","cwd":` + strconv.Quote(t.TempDir()) + `}`
		wait = "tool_start"
	}
	run := f.api.Start(t, body).Run
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := f.api.Events(t, ctx, run, nil)
	defer res.Body.Close()
	pid := 0
	readSSE(t, res.Body, func(m sse) bool {
		var ev struct {
			Type string
			PID  int
		}
		require.NoError(t, json.Unmarshal([]byte(m.data), &ev))
		if ev.Type == "session_start" {
			pid = ev.PID
		}
		return ev.Type != wait
	})
	require.NotZero(t, pid, "the agent never started")
	t.Cleanup(func() {
		if t.Failed() { // a failing test leaves no agent
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	})
	return run, pid
}

// closeWithin calls f.srv.Close (and then, when set, act) and fails
// unless Close returns within d.
func closeWithin(t *testing.T, f *fixture, d time.Duration, act func()) {
	t.Helper()
	closed := make(chan struct{})
	go func() { f.srv.Close(); close(closed) }()
	for !serve.Closing(f.srv) {
		time.Sleep(time.Millisecond)
	}
	if act != nil {
		act()
	}
	select {
	case <-closed:
	case <-time.After(d):
		t.Fatalf("Close still waits after %s for a run deaf to its interrupt (kill grace 1m)", d)
	}
}

// endsKilled checks that the run ended cancelled, its agent SIGKILLed
// and gone.
func endsKilled(t *testing.T, f *fixture, run string, pid int) {
	t.Helper()
	require.False(t, process.Alive(pid), "the agent is still alive")
	log := f.logOf(t, run)
	require.NoError(t, event.CheckNDJSON([]byte(log)))
	lines := strings.Split(strings.TrimSpace(log), "\n")
	last := lines[len(lines)-1]
	require.Contains(t, last, `"type":"result"`)
	require.Contains(t, last, `"status":"cancelled"`)
	require.Contains(t, last, `"signal":"SIGKILL"`)
}

// TestCloseKillsAfterDeadline: Close waits for the runs it interrupted
// no longer than KillAfter, then kills them: it waited out their kill
// grace, whatever it was, with nothing to cut it short.
func TestCloseKillsAfterDeadline(t *testing.T) {
	f := deafFixture(t, false, time.Second)
	run, pid := f.startDeaf(t, false)
	start := time.Now()
	closeWithin(t, f, 20*time.Second, nil)
	require.GreaterOrEqual(t, time.Since(start), time.Second, "killed before KillAfter")
	endsKilled(t, f, run, pid)
}

// TestKillDuringClose: Kill, while Close waits for runs deaf to their
// interrupt, kills their groups at once (the second signal to harness
// serve), a run's and a live session's alike.
func TestKillDuringClose(t *testing.T) {
	for _, session := range []bool{false, true} {
		t.Run(map[bool]string{false: "run", true: "session"}[session], func(t *testing.T) {
			f := deafFixture(t, session, 0) // the default: 2m5s
			run, pid := f.startDeaf(t, session)
			closeWithin(t, f, 20*time.Second, f.srv.Kill)
			endsKilled(t, f, run, pid)
		})
	}
}

// TestEventsEndIsTheRunsLast: the end of a stream names the run's last
// seq, also for a client that resumes past it (it named the client's
// id, one the run never had).
func TestEventsEndIsTheRunsLast(t *testing.T) {
	f := newFixture(t, "serve-gated")
	f.openGate(t)
	run := f.start(t)
	waitStatus(t, f, run)
	log := f.logOf(t, run)
	n := countLines(log)
	last := strconv.Itoa(n)
	require.EqualValues(t, n, seqOf(t, log[strings.LastIndex(strings.TrimSuffix(log, "\n"), "\n")+1:]))
	for _, hdr := range []map[string]string{{"Last-Event-ID": "999"}, {"Last-Event-ID": last}, {"Last-Event-ID": strconv.Itoa(n - 1)}} {
		res := f.api.Events(t, context.Background(), run, hdr)
		var got []sse
		readSSE(t, res.Body, func(m sse) bool { got = append(got, m); return true })
		res.Body.Close()
		require.NotEmpty(t, got)
		end := got[len(got)-1]
		require.Equal(t, "end", end.event, "%v", hdr)
		require.JSONEq(t, `{"last_event_id":`+last+`}`, end.data, "%v", hdr)
		if hdr["Last-Event-ID"] == strconv.Itoa(n-1) {
			require.Len(t, got, 2, "the result, then the end")
			require.Equal(t, last, got[0].id)
		} else {
			require.Len(t, got, 1, "%v: only the end", hdr)
		}
	}
	res := f.api.Do(t, context.Background(), "GET", "/api/runs/"+run+"/events?after=999", "", nil)
	defer res.Body.Close()
	var got []sse
	readSSE(t, res.Body, func(m sse) bool { got = append(got, m); return true })
	require.Equal(t, []sse{{event: "end", data: `{"last_event_id":` + last + `}`}}, got)
}
