//go:build linux

package process

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/execfile"
	"github.com/agentharness/harness/internal/fakeagent"
)

func TestRing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		writes []string
		want   string
		over   bool
	}{
		{"empty", nil, "", false},
		{"under", []string{"ab", "cd"}, "abcd", false},
		{"exactly-full", []string{"abcd", "efgh"}, "abcdefgh", false},
		{"wraps", []string{"abcde", "fghij"}, "cdefghij", true},
		{"one-huge-write", []string{"0123456789abcdef"}, "89abcdef", true},
		{"many-small", strings.Split("a,b,c,d,e,f,g,h,i,j,k", ","), "defghijk", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRing(8)
			var total int64
			for _, w := range c.writes {
				n, err := r.Write([]byte(w))
				require.NoError(t, err)
				require.Equal(t, len(w), n)
				total += int64(len(w))
			}
			require.Equal(t, c.want, string(r.Bytes()))
			require.Equal(t, c.over, r.Overflowed())
			require.Equal(t, total, r.total)
		})
	}
}

func TestCleanPTYLine(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"\x1b[1m\x1b[32m{\"a\":1}\x1b[0m\r":  `{"a":1}`,
		"\x1b]0;title\x07\x1b[2K\r{\"b\":2}": `{"b":2}`,
		"plain":                              "plain",
		"\r\r":                               "",
	}
	for in, want := range cases {
		require.Equal(t, want, string(cleanPTYLine([]byte(in))), "%q", in)
	}
}

// TestStragglerFinder checks the /proc walk and the attribution on a
// live tree: a fake with a child in its group and one in a new session.
func TestStragglerFinder(t *testing.T) {
	t.Parallel()
	r := startFake(t, t.Context(), "interrupt", nil, Options{KillGrace: time.Second}, nil, "")
	var kids []int
	require.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		kids = append([]int(nil), r.pids...)
		return len(kids) == 1
	}, 10*time.Second, 5*time.Millisecond)
	desc := descendants(r.p.pid)
	require.Len(t, desc, 1)
	require.Equal(t, kids[0], desc[0].pid)
	require.Equal(t, r.p.pid, desc[0].ppid)
	byPPID := descendantsByPPID(r.p.pid)
	require.Len(t, byPPID, 1)
	require.Equal(t, kids[0], byPPID[0].pid)

	set, _ := r.p.attribute(allProcs())
	require.Contains(t, set, r.p.pid)
	require.Contains(t, set, kids[0])
	require.NotContains(t, set, os.Getpid())
	for pid := range set {
		require.True(t, pid == r.p.pid || pid == kids[0], "foreign process %d attributed", pid)
	}
	r.p.Interrupt()
	o := r.wait(t, runBound)
	require.ErrorIs(t, o.Reason, ErrInterrupted)
}

// TestConcurrentRunsIsolated: the end-of-run sweep of one run must not
// touch another run's processes, even ones re-parented to the harness.
func TestConcurrentRunsIsolated(t *testing.T) {
	t.Parallel()
	other := startFake(t, t.Context(), "result-then-linger", nil, Options{KillGrace: time.Second}, nil, "")
	require.Eventually(t, func() bool {
		other.mu.Lock()
		defer other.mu.Unlock()
		return len(other.pids) == 1
	}, 10*time.Second, 5*time.Millisecond)
	a := startFake(t, t.Context(), "double-fork-daemon", nil, Options{KillGrace: 100 * time.Millisecond}, nil, "")
	oa := a.wait(t, runBound)
	require.GreaterOrEqual(t, oa.Stragglers, 1)

	other.mu.Lock()
	sleeper := other.pids[0]
	other.mu.Unlock()
	for _, pid := range []int{other.p.pid, sleeper} {
		st, ok := readStat(pid)
		require.True(t, ok, "process %d of the other run was killed", pid)
		require.NotEqual(t, byte('Z'), st.state)
	}
	other.p.Interrupt()
	oo := other.wait(t, runBound) // its bound counts the other run too
	require.ErrorIs(t, oo.Reason, ErrInterrupted)
}

// TestConcurrentDaemonsIsolated: two runs in one process each start a
// daemon that double-forks into a new session with an emptied environment
// (nothing ties it to its run but its ancestry): the end of each run kills
// its own daemon and only that one.
func TestConcurrentDaemonsIsolated(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"cgroup", "reaper"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testConcurrentDaemonsIsolated(t, Options{noCgroup: mode == "reaper"})
		})
	}
}

func testConcurrentDaemonsIsolated(t *testing.T, o Options) {
	pidOf := func(r *run) int {
		var pid int
		require.Eventually(t, func() bool {
			r.mu.Lock()
			defer r.mu.Unlock()
			if len(r.pids) == 1 {
				pid = r.pids[0]
			}
			return pid != 0
		}, 20*time.Second, 5*time.Millisecond)
		return pid
	}
	oa, ob := o, o
	oa.KillGrace, ob.KillGrace = time.Second, 100*time.Millisecond
	a := startFake(t, t.Context(), "env-i-setsid-daemon", []string{"hang"}, oa, nil, "")
	daemonA := pidOf(a)
	b := startFake(t, t.Context(), "env-i-setsid-daemon", nil, ob, nil, "")
	daemonB := pidOf(b)
	outB := b.wait(t, runBound) // checks that daemonB is gone
	require.NoError(t, outB.Reason)
	require.GreaterOrEqual(t, outB.Stragglers, 1)

	st, ok := readStat(daemonA)
	require.True(t, ok, "the other run's daemon %d was killed", daemonA)
	require.NotEqual(t, byte('Z'), st.state, "the other run's daemon %d was killed", daemonA)
	require.NotEqual(t, daemonA, daemonB)
	a.p.Interrupt()
	outA := a.wait(t, runBound) // checks that daemonA is gone
	require.ErrorIs(t, outA.Reason, ErrInterrupted)
}

func TestSpawnErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	t.Run("not-found-in-path", func(t *testing.T) {
		t.Parallel()
		_, err := Start(t.Context(), Options{Argv: []string{"no-such-agent"}, Env: []string{"PATH=/nonexistent-a:" + dir}})
		var nf *NotFoundError
		require.ErrorAs(t, err, &nf)
		require.Equal(t, "no-such-agent", nf.Name)
		require.Equal(t, []string{"/nonexistent-a/no-such-agent", filepath.Join(dir, "no-such-agent")}, nf.Tried)
		require.Contains(t, err.Error(), "/nonexistent-a/no-such-agent")
	})
	t.Run("not-found-path", func(t *testing.T) {
		t.Parallel()
		_, err := Start(t.Context(), Options{Argv: []string{"/nonexistent/claude"}})
		var nf *NotFoundError
		require.ErrorAs(t, err, &nf)
		require.Equal(t, []string{"/nonexistent/claude"}, nf.Tried)
	})
	t.Run("not-executable", func(t *testing.T) {
		t.Parallel()
		_, err := Start(t.Context(), Options{Argv: []string{"file"}, Env: []string{"PATH=" + dir}})
		var nf *NotFoundError
		require.ErrorAs(t, err, &nf)
	})
	t.Run("bad-dir", func(t *testing.T) {
		t.Parallel()
		argv, env := fakeagent.Command("exit-0-without-terminal-event")
		_, err := Start(t.Context(), Options{Argv: argv, Env: env, Dir: file})
		require.ErrorIs(t, err, ErrBadDir)
		_, err = Start(t.Context(), Options{Argv: argv, Env: env, Dir: filepath.Join(dir, "missing")})
		require.ErrorIs(t, err, ErrBadDir)
	})
	t.Run("empty-argv", func(t *testing.T) {
		t.Parallel()
		_, err := Start(t.Context(), Options{})
		require.ErrorIs(t, err, ErrSpawn)
	})
	for _, mode := range []string{"", "-reaper"} {
		t.Run("exec-format-error"+mode, func(t *testing.T) {
			t.Parallel()
			bad := filepath.Join(t.TempDir(), "agent")
			require.NoError(t, execfile.Write(bad, []byte("\x00\x01\x02garbage"), 0o755))
			_, err := Start(t.Context(), Options{Argv: []string{bad}, noCgroup: mode != ""})
			require.ErrorIs(t, err, ErrSpawn)
			require.ErrorIs(t, err, syscall.ENOEXEC)
		})
	}
	t.Run("cancelled-context", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		argv, env := fakeagent.Command("exit-0-without-terminal-event")
		_, err := Start(ctx, Options{Argv: argv, Env: env})
		require.ErrorIs(t, err, context.Canceled)
	})
}

func TestEnvAndDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := startFake(t, t.Context(), "stdin-reader", nil, Options{Dir: dir, Stdin: "x"}, nil, "")
	o := r.wait(t, runBound)
	require.NoError(t, o.Reason)
	require.Equal(t, 0, o.ExitCode)
	env, err := os.ReadFile("/proc/self/environ")
	require.NoError(t, err)
	require.NotContains(t, string(env), string(r.p.marker), "the marker is the child's only")
	require.Equal(t, dir, r.p.cmd.Dir)
	require.Equal(t, o, r.p.Wait(), "Wait is idempotent")
	r.p.Interrupt() // after the end: nothing to do
	require.Equal(t, o, r.p.Wait())
}

func TestPTY(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, fake, stdin string
		want              []string
	}{
		{"ansi-and-crlf", "ansi-colors", "", []string{
			`{"type":"system","subtype":"init","tty":true,"seq":1}`,
			`{"type":"result","subtype":"success","seq":2}`,
		}},
		{"stdin-stays-a-pipe", "stdin-reader", "one\ntwo", nil},
	}
	for _, c := range cases {
		for _, mode := range []string{"", "-reaper"} {
			t.Run(c.name+mode, func(t *testing.T) {
				t.Parallel()
				var mu sync.Mutex
				var lines []string
				argv, env := fakeagent.Command(c.fake)
				p, err := Start(t.Context(), Options{
					Argv: argv, Env: env, PTY: true, Stdin: c.stdin, KillGrace: time.Second,
					OnStdout: func(l []byte, _ int64) { mu.Lock(); lines = append(lines, string(l)); mu.Unlock() },
					noCgroup: mode != "",
				})
				require.NoError(t, err)
				require.Equal(t, mode != "", p.rp != nil)
				o := p.Wait()
				require.NoError(t, o.Reason)
				require.Equal(t, 0, o.ExitCode)
				mu.Lock()
				defer mu.Unlock()
				if c.want != nil {
					require.Equal(t, c.want, lines)
					return
				}
				require.Len(t, lines, 4)
				require.Contains(t, lines[1], `"text":"one"`)
				require.Contains(t, lines[2], `"text":"two"`)
				for _, l := range lines {
					require.NotContains(t, l, "\r")
				}
			})
		}
	}
}

// TestStderrFlood floods stderr with 100 MiB: the tail is exactly its last
// 64 KiB, one stderr_truncated warning, memory flat. Not parallel: it
// measures the test process's peak RSS.
func TestStderrFlood(t *testing.T) {
	const size = 100 << 20
	r, o := floodRun(t, &run{ready: make(chan struct{})}, "flood-stderr", size, 30*time.Second)
	require.NoError(t, o.Reason)
	require.Equal(t, int64(size+len("stderr end\n")), o.StderrBytes)
	require.Len(t, o.StderrTail, tailSize)
	require.True(t, bytes.HasSuffix(o.StderrTail, []byte("\n"+strings.Repeat("e", 1023)+"\nstderr end\n")))
	require.Len(t, r.warningsOf(event.WarnStderrTruncated), 1)
	require.Equal(t, size/1024+1, r.errLines)
	r.requireSeqs(t, 2)
}

// TestHugeLine sends one 100 MiB stdout line: cut at the 16 MiB cap,
// reported, and the next line still delivered; memory bounded (linescan
// grows its long-line buffer by append, ×1.25 steps: ~95 MiB allocated
// for a 16 MiB line, so the heap peaks near 3× the cap until linescan
// pre-sizes it; the bound still fails if the line were kept whole).
func TestHugeLine(t *testing.T) {
	const size = 100 << 20
	r, o := floodRun(t, &run{ready: make(chan struct{})}, "huge-line", size, 30*time.Second)
	require.NoError(t, o.Reason)
	r.mu.Lock()
	defer r.mu.Unlock()
	require.Equal(t, []int{1, 2, 3}, r.seqs)
	require.Equal(t, 16<<20, r.lens[1])
	require.Greater(t, r.dropped[1], int64(size-16<<20))
	require.Zero(t, r.dropped[2])
}

// floodRun runs the flooding fake with its size argument into r (within
// wait), and holds the test process's peak memory growth meanwhile under
// 40 MiB: the heap, and RSS too where the race detector's shadow memory
// does not count in it.
func floodRun(t *testing.T, r *run, fake string, size int, wait time.Duration) (*run, Outcome) {
	t.Helper()
	var o Outcome
	rss, heap := memGrowth(t, func() {
		startRun(t, t.Context(), r, fake, []string{strconv.Itoa(size)}, Options{Idle: time.Minute, KillGrace: time.Second}, nil, "")
		o = r.wait(t, wait)
	})
	t.Logf("peak RSS grew by %d MiB, peak heap by %d MiB (race: %t)", rss>>20, heap>>20, raceEnabled)
	const bound = 40 << 20
	require.Less(t, heap, int64(bound), "peak heap growth")
	if !raceEnabled {
		require.Less(t, rss, int64(bound), "peak RSS growth")
	}
	return r, o
}

// TestPdeathsig: a harness killed with SIGKILL (no chance to clean up)
// does not leave its agent running: Pdeathsig, tied to the locked thread
// that started the agent (or the run's reaper, whose own Pdeathsig then
// kills the agent), kills it.
func TestPdeathsig(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"direct", "reaper"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			cmd, out := startReporting(t, "mini-harness", mode)
			line := string(out)
			m := pidRe.FindStringSubmatch(line)
			require.NotNil(t, m, line)
			agent, _ := strconv.Atoi(m[1])
			if cg := regexp.MustCompile(`"cgroup":"([^"]+)"`).FindStringSubmatch(line); cg != nil {
				// Killed, the mini-harness cannot remove its run's cgroup.
				t.Cleanup(func() { (&runCgroup{dir: cg[1], fd: -1}).remove() })
			}
			before, ok := readStat(agent)
			require.True(t, ok)
			parent := before.ppid
			if mode == "reaper" || !cgroupsUsable() {
				// The agent's parent is the run's reaper, a child of the
				// mini-harness (this test binary, which installs the hook).
				reaper, ok := readStat(before.ppid)
				require.True(t, ok)
				parent = reaper.ppid
			}
			require.Equal(t, cmd.Process.Pid, parent)

			require.NoError(t, cmd.Process.Kill())
			_ = cmd.Wait()
			// Polling the kernel, not another goroutine: the agent dies
			// asynchronously and is then re-parented to us (or init) as a
			// zombie.
			require.Eventually(t, func() bool {
				st, ok := readStat(agent)
				if ok && st.start == before.start && st.state == 'Z' && st.ppid == os.Getpid() {
					var ws unix.WaitStatus
					_, _ = unix.Wait4(agent, &ws, unix.WNOHANG, nil)
					return ws.Signaled() && ws.Signal() == unix.SIGKILL
				}
				return !ok || st.start != before.start || st.state == 'Z'
			}, 10*time.Second, 5*time.Millisecond, "the agent outlived its harness")
		})
	}
}

// TestForeignPipeHolder: a process we cannot attribute to the run (here the
// test process itself, through /proc/PID/fd/1) holds the agent's stdout
// open after the agent exited: the run still ends, a grace and the drain
// timeout later, with every line the agent wrote.
func TestForeignPipeHolder(t *testing.T) {
	t.Parallel()
	var held *os.File
	t.Cleanup(func() {
		if held != nil {
			_ = held.Close()
		}
	})
	r := startFake(t, t.Context(), "interrupt", nil, Options{KillGrace: time.Second},
		onLine(`"tool_use"`, func(r *run) {
			f, err := os.OpenFile("/proc/"+strconv.Itoa(r.p.pid)+"/fd/1", os.O_WRONLY, 0)
			if err == nil {
				held = f
			}
			r.p.Interrupt()
		}), "")
	o := r.wait(t, runBound)
	require.NotNil(t, held, "could not open the agent's stdout")
	require.GreaterOrEqual(t, o.Duration, time.Second+drainTimeout, "the pipe was given up on, not closed by its holder")
	require.ErrorIs(t, o.Reason, ErrInterrupted)
	require.GreaterOrEqual(t, o.StdoutLines, int64(3))
	r.requireSeqs(t, int(o.StdoutLines))
}

// newIdleProc is a Proc with no process behind it, for driving the
// watchdogs (Proc.watch) directly.
func newIdleProc(o Options) *Proc {
	p := &Proc{
		o: o, budgets: o.ToolBudget, start: time.Now(),
		poke: make(chan struct{}, 1), exited: make(chan struct{}),
		tracked: map[int]uint64{}, stragglers: map[int]uint64{},
	}
	if p.budgets == nil {
		p.budgets = DefaultToolBudget
	}
	p.tools = newToolSet()
	close(p.exited) // so that no signal can ever be sent: there is no group
	return p
}

// TestOpenToolCallsLinear: opening n calls that never close, with the
// watchdogs run after each (as the supervisor is woken by each), does work
// linear in n, and the budgets and warnings still come out right.
func TestOpenToolCallsLinear(t *testing.T) {
	t.Parallel()
	const n = 4000
	p := newIdleProc(Options{Idle: time.Hour, ToolBudget: func(k event.Kind) time.Duration {
		if k == event.KindRead {
			return 2 * time.Second
		}
		return 10 * time.Second
	}})
	var s supervisor
	var t0 time.Time
	for i := range n {
		kind := event.KindShell
		if i%2 == 0 {
			kind = event.KindRead
		}
		p.ToolStarted("call"+strconv.Itoa(i), "", kind)
		if i == 0 {
			t0 = p.tools.calls["call0"].started
		}
		// The watchdogs run at the first call's start, not at time.Now():
		// this counts work, and a loaded machine must not take the loop
		// past the read budget.
		next := p.watch(&s, t0)
		require.Equal(t, t0.Add(2*time.Second), next, "the first read call's budget is the next thing due")
	}
	require.LessOrEqual(t, s.visits, int64(4*n), "watchdog work per wake grows with the open calls")
	require.NoError(t, s.reason)

	// Past the read budget: one tool_stalled warning per read call, once.
	base := time.Now()
	var warned []*event.Warning
	p.o.OnWarning = func(w *event.Warning) { warned = append(warned, w) }
	// Warnings are delivered by a goroutine of their own: each watch is
	// followed by the wait for them (as Wait does).
	watch := func(now time.Time) { p.watch(&s, now); p.warns.wait() }
	watch(base.Add(2500 * time.Millisecond))
	require.Equal(t, n/2, len(warned))
	for _, w := range warned {
		require.Equal(t, int64(2000), w.BudgetMS)
	}
	watch(base.Add(2600 * time.Millisecond))
	require.Equal(t, n/2, len(warned), "a call is warned about once")
	for i := 0; i < n; i += 2 {
		p.ToolEnded("call" + strconv.Itoa(i))
	}
	watch(base.Add(10500 * time.Millisecond))
	require.Equal(t, n, len(warned), "then the shell calls past their budget")
	require.Equal(t, int64(10000), warned[n-1].BudgetMS)
	require.NoError(t, s.reason)
}

// TestRunCgroupRemove: the end of a run removes its cgroup, with the
// cgroups a nested harness made inside it (killed with the run, it could
// not remove them); where cgroup v2 is not writable there is none.
func TestRunCgroupRemove(t *testing.T) {
	t.Parallel()
	cg := newRunCgroup("test" + strconv.Itoa(os.Getpid()))
	if !cgroupsUsable() {
		require.Nil(t, cg)
		return
	}
	require.NotNil(t, cg)
	nested := filepath.Join(cg.dir, "harness-run-nested", "harness-run-deeper")
	require.NoError(t, os.MkdirAll(nested, 0o755))
	cg.remove()
	_, err := os.Stat(cg.dir)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestReaperKilled: a run whose reaper is killed from outside ends at
// once, its agent dead of the reaper's Pdeathsig (reported as SIGKILL), and
// what the agent started is still found (re-parented to us, with the
// run's marker) and killed.
func TestReaperKilled(t *testing.T) {
	t.Parallel()
	r := startFake(t, t.Context(), "interrupt", nil, Options{KillGrace: time.Second, noCgroup: true},
		onLine(`"tool_use"`, func(r *run) { require.NoError(t, unix.Kill(r.p.rp.pid, unix.SIGKILL)) }), "")
	require.NotNil(t, r.p.rp)
	o := r.wait(t, runBound)
	require.NoError(t, o.Reason)
	require.True(t, o.Exited)
	require.Equal(t, -1, o.ExitCode)
	require.Equal(t, "SIGKILL", o.Signal)
	require.Len(t, r.pids, 1)
}

// TestNoWalksWhenHeld: a run held by its own cgroup or reaper is never
// walked in /proc, however long it lasts: the cgroup or the reaper's tree
// finds all of it at the end (an idle run cost 15 ms of CPU a second in
// walks).
func TestNoWalksWhenHeld(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"cgroup", "reaper"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			r := startFake(t, t.Context(), "long-silent-tool", []string{"300ms"},
				Options{Idle: time.Minute, KillGrace: time.Second, noCgroup: mode == "reaper"}, nil, "")
			require.True(t, r.p.cg != nil || r.p.rp != nil)
			o := r.wait(t, runBound)
			require.NoError(t, o.Reason)
			require.Zero(t, r.p.walks.Load())
		})
	}
}

// TestPokesLookOncePerTrackEvery: an agent opening tool calls back to
// back gets one look at its processes per trackEvery, not one per call
// (a run of 20000 quick calls spent 12 % of its CPU reading its cgroup's
// list).
func TestPokesLookOncePerTrackEvery(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"cgroup", "walk"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			// A count of pokes, not a time: a loaded machine made too few
			// in a fixed silence to tell anything (55 in 450 ms).
			ctx, cancel := context.WithCancel(t.Context())
			r := startFake(t, ctx, "long-silent-tool", []string{"1m"},
				Options{Idle: time.Minute, KillGrace: time.Second, noCgroup: mode == "walk", noReaper: true}, nil, "")
			if mode == "cgroup" {
				require.NotNil(t, r.p.cg, "this machine gives runs a cgroup of their own")
			}
			start := time.Now()
			const pokes = 300
			for i := range pokes {
				id := "call_" + strconv.Itoa(i)
				r.p.ToolStarted(id, "Bash", event.KindShell)
				r.p.ToolEnded(id)
				time.Sleep(200 * time.Microsecond)
			}
			looks, elapsed := r.p.looks.Load(), time.Since(start)
			cancel()
			r.wait(t, runBound)
			limit := int64(elapsed/trackEvery) + 2
			require.LessOrEqual(t, looks, limit, "%d pokes in %v", pokes, elapsed)
			require.Positive(t, looks)
		})
	}
}

// TestNextWalk: without a cgroup or reaper, walks back off while nothing
// changes, doubling the pause to one a second, and come back at once on a
// change; the reads of a run's cgroup back off four times as fast, to one
// every 30 s.
func TestNextWalk(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	for _, c := range []struct {
		pace backOff
		want []time.Duration
	}{
		{walkBackOff, []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second, time.Second, time.Second, time.Second, time.Second}},
		{heldBackOff, []time.Duration{200 * ms, 800 * ms, 3200 * ms, 12800 * ms, 30 * time.Second, 30 * time.Second}},
	} {
		d := trackEvery
		var seen []time.Duration
		for range len(c.want) {
			d = c.pace.next(d, false)
			seen = append(seen, d)
		}
		require.Equal(t, c.want, seen)
		require.Equal(t, trackEvery, c.pace.next(c.pace.ceiling, true))
	}
}

// TestBeforeReadOnlyBeforeWaiting: BeforeStdoutRead tells a read that may
// wait for the pipe (the moment the harness flushes its writers) from
// reads of output already in it: a flooding agent does not cost a flush
// of every writer per read.
func TestBeforeReadOnlyBeforeWaiting(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	_, err = w.WriteString("0123456789")
	require.NoError(t, err)
	require.NoError(t, w.Close())
	var read atomic.Int64
	var waits []bool
	a := activityReader{r: r, p: newIdleProc(Options{}), before: func(wait bool) { waits = append(waits, wait) }, read: &read}
	buf := make([]byte, 4)
	for _, want := range []int{4, 4, 2} {
		n, err := a.Read(buf)
		require.NoError(t, err)
		require.Equal(t, want, n)
	}
	_, err = a.Read(buf)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, []bool{false, false, false, true}, waits, "the pipe held what the first three reads took; the last waits on it")
}

// TestStdoutPipeHoldsAMiB: the agent's stdout pipe is widened to a MiB
// (or pipe-max-size, when lower), so that a flood wakes harness less
// often (WidenPipe).
func TestStdoutPipeHoldsAMiB(t *testing.T) {
	t.Parallel()
	limit, err := os.ReadFile("/proc/sys/fs/pipe-max-size")
	require.NoError(t, err)
	max, err := strconv.Atoi(strings.TrimSpace(string(limit)))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	argv, env := fakeagent.Command("long-silent-tool", "30s")
	p, err := Start(ctx, Options{Argv: argv, Env: env})
	require.NoError(t, err)
	c, err := p.stdoutR.SyscallConn()
	require.NoError(t, err)
	var size int
	require.NoError(t, c.Control(func(fd uintptr) { size, err = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) }))
	require.NoError(t, err)
	cancel()
	p.Wait()
	if max >= 1<<20 {
		require.Equal(t, 1<<20, size)
	} else {
		require.Equal(t, 64<<10, size, "left as it was")
	}
}
