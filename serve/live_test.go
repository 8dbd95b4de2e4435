package serve

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/logger"
)

// TestLiveWakeAfterDisk: the readers of a run this server started are
// woken only once the line they are woken for is in the log file (the
// library buffers the log until it flushes): a reader woken earlier finds
// nothing and sleeps until the next poll. Each wake is checked as it
// happens, inside the observer's call.
func TestLiveWakeAfterDisk(t *testing.T) {
	dir := t.TempDir()
	argv, env := fakeagent.Command("serve-lines") // registered by serve_test.go
	cfg := config.Defaults()
	cfg.Agents = map[string]config.AgentConfig{"claude": {Binary: argv[0]}}
	ls := &harness.Settings{Config: &cfg, Environ: append(env, "SERVE_TEST_LINES=20"), LogDir: dir}
	task := harness.Task{Agent: "claude", Prompt: "look", Cwd: t.TempDir(), Run: event.NewRunID()}
	path := filepath.Join(dir, task.Run+logger.ExtEvents)

	lr := newLiveRun(nil)
	obs := lr.observer()
	var wakes atomic.Int64
	checked := func(call func()) {
		before := lr.waitChan()
		call()
		select {
		case <-before:
		default:
			return
		}
		wakes.Add(1)
		head := lr.headSeq()
		data, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(data, fmt.Appendf(nil, `"seq":%d,`, head)) {
			t.Errorf("readers woken for seq %d before the log file had it (%d bytes, %v)", head, len(data), err)
		}
	}
	r, err := startLogged(context.Background(), ls, task, harness.Observer{
		OnLine: func(line []byte) { checked(func() { obs.OnLine(line) }) },
		Flush: func() {
			checked(func() {
				if obs.Flush != nil {
					obs.Flush()
				}
			})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := r.Wait(); err != nil || res.Status != "success" {
		t.Fatalf("the run ended %v, %v; want success", res, err)
	}
	if wakes.Load() == 0 {
		t.Error("the readers were never woken")
	}
}

// interrupts counts a run handle's interrupts.
type interrupts struct{ n atomic.Int32 }

func (c *interrupts) Interrupt() { c.n.Add(1) }

// TestInterruptBeforeHandle: an interrupt that comes before the run has
// its handle (launch registers a run before its start returns) stops it
// once it has one; a run not interrupted is not.
func TestInterruptBeforeHandle(t *testing.T) {
	lr, h := newLiveRun(nil), &interrupts{}
	lr.interrupt()
	lr.setRun(h)
	if h.n.Load() != 1 {
		t.Fatalf("the run got %d interrupts, want 1", h.n.Load())
	}
	lr, h = newLiveRun(nil), &interrupts{}
	lr.setRun(h)
	if h.n.Load() != 0 {
		t.Fatalf("a run not interrupted got %d interrupts", h.n.Load())
	}
}
