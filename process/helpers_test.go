//go:build linux

package process

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

// run records what a supervised fake did.
type run struct {
	p        *Proc
	ready    chan struct{} // closed once p is set
	mu       sync.Mutex
	lines    []string // each line's first 256 bytes
	lens     []int
	dropped  []int64
	seqs     []int
	pids     []int // processes the fake announced
	warnings []*event.Warning
	errLines int
	light    bool // keep no lines: check seqs on the fly (floods)
	// warnGate, when set, holds OnWarning after it recorded a warning
	// until the gate is closed: a consumer that does not read.
	warnGate chan struct{}
	lastSeq  int
	badSeq   int           // lines whose seq did not follow the previous one (light)
	first    time.Duration // when the first line came, after spawn
}

var (
	seqRe = regexp.MustCompile(`"seq":(\d+)|seq=(\d+)`)
	pidRe = regexp.MustCompile(`"subtype":"fake_child","pid":(\d+)`)
)

// hook reacts to a stdout line the way the composition layer would.
type hook func(r *run, line string)

// bootKind is the kind of the pretend tool call startFake opens while a
// fake starts up: a race-enabled test binary can take over a second to
// start on a loaded machine, which must not count against idle budgets of
// a few hundred milliseconds (real agents' budgets are minutes).
const bootKind event.Kind = "boot"

// startFake runs fake name under Start with o (Argv, Env and the callbacks
// are filled in) and returns once Start did. With boot != "", a pretend
// tool call of kind bootKind (budget one minute) is open from the spawn to
// the first line containing boot, so that start-up time is not idle time.
func startFake(t *testing.T, ctx context.Context, name string, args []string, o Options, h hook, boot string) *run {
	t.Helper()
	return startRun(t, ctx, &run{ready: make(chan struct{})}, name, args, o, h, boot)
}

func startRun(t *testing.T, ctx context.Context, r *run, name string, args []string, o Options, h hook, boot string) *run {
	t.Helper()
	if boot != "" {
		budgets := o.ToolBudget
		o.ToolBudget = func(k event.Kind) time.Duration {
			if k == bootKind {
				return time.Minute
			}
			if budgets == nil {
				return DefaultToolBudget(k)
			}
			return budgets(k)
		}
		inner := h
		h = func(r *run, line string) {
			if inner != nil {
				inner(r, line)
			}
			if strings.Contains(line, boot) {
				r.p.ToolEnded("boot")
			}
		}
	}
	o.Argv, o.Env = fakeagent.Command(name, args...)
	o.OnStdout = func(line []byte, dropped int64) {
		if r.light {
			n := -1
			if i := bytes.LastIndex(line, []byte(`"seq":`)); i >= 0 {
				digits := bytes.TrimRight(line[i+6:], "}")
				n, _ = strconv.Atoi(string(digits))
			}
			r.mu.Lock()
			if n != r.lastSeq+1 {
				r.badSeq++
			}
			r.lastSeq = n
			r.mu.Unlock()
			return
		}
		head := string(line[:min(len(line), 256)])
		r.mu.Lock()
		if len(r.lines) == 0 {
			<-r.ready
			r.first = time.Since(r.p.start)
		}
		r.lines = append(r.lines, head)
		r.lens = append(r.lens, len(line))
		r.dropped = append(r.dropped, dropped)
		if m := seqRe.FindStringSubmatch(head); m != nil {
			n, _ := strconv.Atoi(m[1] + m[2])
			r.seqs = append(r.seqs, n)
		} else if m := seqRe.FindSubmatch(line); m != nil { // seq at the end of a long line
			n, _ := strconv.Atoi(string(m[1]) + string(m[2]))
			r.seqs = append(r.seqs, n)
		}
		if m := pidRe.FindStringSubmatch(head); m != nil {
			n, _ := strconv.Atoi(m[1])
			r.pids = append(r.pids, n)
		}
		r.mu.Unlock()
		if h != nil {
			<-r.ready
			h(r, head)
		}
	}
	o.OnStderr = func([]byte) { r.mu.Lock(); r.errLines++; r.mu.Unlock() }
	o.OnWarning = func(w *event.Warning) {
		r.mu.Lock()
		r.warnings = append(r.warnings, w)
		r.mu.Unlock()
		if r.warnGate != nil {
			<-r.warnGate
		}
	}
	p, err := Start(ctx, o)
	require.NoError(t, err)
	r.p = p
	if boot != "" {
		p.ToolStarted("boot", "", bootKind)
	}
	close(r.ready)
	t.Cleanup(func() { // never leave a fake behind, even when an assertion failed
		p.Interrupt()
		p.Interrupt()
		p.Wait()
	})
	return r
}

// wait waits for the run and requires it to have ended within bound of
// the fake's first line (of the spawn when it printed none): start-up time
// of a race-enabled test binary on a loaded machine (seconds, at worst) is
// not the supervisor's doing. A run not over a minute after bound fails.
// runBound is the time a run of the tests must end within after its first
// line, where every wrong ending costs a minute or more (an idle budget, a
// kill grace or the fake's own run of a minute, or a hang): a bound far
// above the correct ending's (a few seconds at most on a quiet machine)
// still tells them apart on a loaded one, where correct runs took up to
// 2.13s against the former bounds of 2s (load 28).
const runBound = 30 * time.Second

func (r *run) wait(t *testing.T, bound time.Duration) Outcome {
	t.Helper()
	select {
	case <-r.p.done:
	case <-time.After(bound + time.Minute):
		t.Fatalf("run not over after %s (bound %s)", time.Since(r.p.start), bound)
	}
	o := r.p.Wait()
	r.mu.Lock()
	first := r.first
	r.mu.Unlock()
	t.Logf("%s: bound %s, took %s after the first line (%s after spawn)", t.Name(), bound, (o.Duration - first).Round(time.Millisecond), o.Duration.Round(time.Millisecond))
	require.LessOrEqual(t, o.Duration-first, bound, "run took longer than its bound")
	requireNoneAlive(t, r)
	return o
}

func (r *run) warningsOf(code string) []*event.Warning {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*event.Warning
	for _, w := range r.warnings {
		if w.Code == code {
			out = append(out, w)
		}
	}
	return out
}

// requireSeqs checks that lines 1..n were delivered, in order, once.
func (r *run) requireSeqs(t *testing.T, n int) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if n == 0 {
		require.Empty(t, r.seqs, "lines delivered (by seq)")
		return
	}
	want := make([]int, n)
	for i := range want {
		want[i] = i + 1
	}
	require.Equal(t, want, r.seqs, "lines delivered (by seq)")
}

// requireNoneAlive checks that no process of the run is left: not in the
// child's group, not carrying the run's marker, none of the pids the fake
// announced (not even as a zombie of ours). A zombie whose parent is not
// us is dead and its parent's to reap: a run in a cgroup does not make us
// a subreaper, and its orphans go to init.
func requireNoneAlive(t *testing.T, r *run) {
	t.Helper()
	self := os.Getpid()
	othersZombie := func(st procStat) bool { return st.state == 'Z' && st.ppid != self }
	ofRun := func(pid int) bool { has, _ := environHas(pid, r.p.marker); return has }
	for pid, st := range allProcs() {
		if othersZombie(st) {
			continue
		}
		require.NotEqual(t, r.p.pid, st.pgrp, "process %d of the run's group is alive (state %c)", pid, st.state)
		if st.state != 'Z' {
			require.False(t, ofRun(pid), "process %d of the run is alive", pid)
		}
	}
	r.mu.Lock()
	pids := append([]int{r.p.pid}, r.pids...)
	r.mu.Unlock()
	for _, pid := range pids {
		st, ok := readStat(pid)
		if ok && pid == r.p.pid && !ofRun(pid) && st.pgrp != r.p.pid {
			continue // the pid was reused by an unrelated process
		}
		if ok && othersZombie(st) {
			continue
		}
		require.False(t, ok, "process %d of the run still exists (state %c, parent %d, we are %d)", pid, st.state, st.ppid, os.Getpid())
	}
}

// memGrowth runs fn and returns how much the test process's peak RSS
// (VmHWM after a reset through clear_refs, else sampled VmRSS) and peak
// Go heap (sampled) grew meanwhile. Under -race RSS also counts the race
// detector's shadow memory (several times the heap), so tests assert on
// the heap there.
func memGrowth(t *testing.T, fn func()) (rss, heap int64) {
	t.Helper()
	runtime.GC()
	baseRSS := procStatusKB(t, "VmRSS")
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	readHeap := func() int64 { metrics.Read(sample); return int64(sample[0].Value.Uint64()) }
	baseHeap := readHeap()
	reset := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	var peakRSS, peakHeap int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			peakHeap = max(peakHeap, readHeap())
			if !reset {
				peakRSS = max(peakRSS, procStatusKB(t, "VmRSS"))
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	fn()
	close(stop)
	wg.Wait()
	if reset {
		peakRSS = procStatusKB(t, "VmHWM")
	}
	return (peakRSS - baseRSS) << 10, peakHeap - baseHeap
}

func procStatusKB(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// startReporting starts the fake agent scenario (a harness of its own that
// the test kills) and returns it with the first line it prints, its
// report; it is killed at the test's end, also when an assertion failed.
func startReporting(t *testing.T, scenario ...string) (*exec.Cmd, []byte) {
	t.Helper()
	argv, env := fakeagent.Command(scenario[0], scenario[1:]...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	line, err := bufio.NewReader(out).ReadBytes('\n')
	require.NoError(t, err)
	return cmd, line
}
