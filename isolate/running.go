package isolate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Running is a started container: Stop removes it.
type Running struct {
	Name  string
	eng   *Engine
	cmd   *exec.Cmd
	stdin io.WriteCloser
	errb  *tailWriter
	done  chan struct{}
}

// Start starts c (RunArgs) and returns once it runs, or when ctx ends
// (the error tells context.Cause); a bind of a path holding ':' is
// refused. Its engine client
// runs in its own process group (a terminal's ^C is harness's to handle);
// harness holds its stdin: the container ends when harness does.
func (e *Engine) Start(ctx context.Context, c Container, env []string) (*Running, error) {
	for _, b := range c.Binds {
		// -v HOST:INNER[:ro] is split at every ':': such a path would be
		// refused in the engine's words, or mounted elsewhere than asked.
		if strings.Contains(b.Host, ":") || strings.Contains(b.Inner, ":") {
			return nil, fmt.Errorf("isolate %s: cannot bind %s at %s: a path with ':' cannot be given to -v", e.Name, b.Host, b.Inner)
		}
	}
	argv := e.RunArgs(c)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// What the client leaves holding its stderr must not hold Stop.
	cmd.WaitDelay = clientGrace
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	r := &Running{Name: c.Name, eng: e, cmd: cmd, stdin: stdin, errb: &tailWriter{max: 4096}, done: make(chan struct{})}
	cmd.Stderr = r.errb
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("isolate %s: %w", e.Name, err)
	}
	ready := make(chan bool, 1)
	go func() {
		buf := make([]byte, 6)
		n, _ := io.ReadFull(stdout, buf)
		ready <- n == 6 && string(buf) == "ready\n"
		io.Copy(io.Discard, stdout)
	}()
	go func() { cmd.Wait(); close(r.done) }()
	select {
	case ok := <-ready:
		if ok {
			return r, nil
		}
	case <-ctx.Done():
	}
	r.Stop()
	msg := r.errb.last()
	if msg == "" {
		msg = "the container did not start"
	}
	if ctx.Err() != nil {
		msg = context.Cause(ctx).Error() // the caller's words for its bound
	}
	return nil, fmt.Errorf("isolate %s run %s: %s", e.Name, c.Image, msg)
}

// Stop ends and removes the container, and waits for its client. When
// the container is still there at the end, the error keeps what the
// engine said when removing it failed (not the deadline's text).
func (r *Running) Stop() error {
	r.stdin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	_, rmErr := Run(ctx, r.eng.RemoveArgs(r.Name))
	// Seen with podman and runc: after an exec'd process was killed, rm
	// fails ("given PIDs did not die within timeout"), the container stays
	// (exited) and the client never ends. A client still there after a
	// while is killed, and the container removed until it is gone.
	wedged := time.NewTimer(clientGrace)
	defer wedged.Stop()
	select {
	case <-r.done:
	case <-wedged.C:
		r.killClient()
		<-r.done
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		gone, err := r.gone(ctx)
		if gone {
			return nil
		}
		if rmErr == nil && err != nil {
			rmErr = err
		}
		select {
		case <-ctx.Done():
			if rmErr == nil {
				rmErr = ctx.Err()
			}
			return fmt.Errorf("isolate %s: container %s is still there: %v", r.eng.Name, r.Name, rmErr)
		case <-tick.C:
		}
		if _, err := Run(ctx, r.eng.RemoveArgs(r.Name)); err != nil && rmErr == nil && ctx.Err() == nil {
			rmErr = err
		}
	}
}

// killClient kills the engine's client and its process group, the
// client's own (Setpgid): what it started there (rootless podman's
// re-executed self, a helper) would outlive it. Only while the client is
// not reaped: after, its pgid could name another's group.
func (r *Running) killClient() {
	select {
	case <-r.done:
		return
	default:
	}
	syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	r.cmd.Process.Kill()
}

// gone reports whether the container no longer exists. Only the engine's
// own "no such container" is gone: its failing otherwise (a deadline, a
// broken engine) is not, and is returned.
func (r *Running) gone(ctx context.Context) (bool, error) {
	argv := r.eng.ExistsArgs(r.Name)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	cmd.WaitDelay = clientGrace // as for the client's
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return false, nil
	case ctx.Err() != nil:
		return false, ctx.Err()
	case errors.As(err, &ee) && ee.ExitCode() == 1 &&
		(r.eng.Name == Podman || strings.Contains(strings.ToLower(errb.String()), "no such")):
		// podman container exists: 1 is "no such container", 125 an
		// error; docker inspect says "No such container".
		return true, nil
	}
	msg := strings.TrimSpace(errb.String())
	if msg == "" {
		msg = err.Error()
	}
	return false, fmt.Errorf("%s %s: %s", filepath.Base(argv[0]), argv[1], lastLine(msg))
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// stopTimeout bounds Stop (a variable: a test shortens it).
var stopTimeout = time.Minute

// clientGrace is how long Stop waits for the engine's client to end
// once the container was removed, and how long an ended client's or
// existence check's stderr is read while something it left holds it
// (a variable: a test shortens it).
var clientGrace = 5 * time.Second

// tailWriter keeps the last max bytes written to it, in one buffer of
// at most max bytes however much is written.
type tailWriter struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	if len(p) > w.max {
		p = p[len(p)-w.max:]
	}
	if over := len(w.b) + len(p) - w.max; over > 0 {
		w.b = w.b[:copy(w.b, w.b[over:])] // in place: no new buffer
	}
	w.b = append(w.b, p...)
	return n, nil
}

// last is the last non-empty line written.
func (w *tailWriter) last() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := strings.TrimSpace(string(w.b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// AgentMark is set in the environment of what Running's exec starts for
// the agent: its processes (and what they started) carry it.
const AgentMark = "HARNESS_CONTAINER_AGENT=1"

// killMarked kills, in the container, every process with AgentMark in
// its environment.
const killMarked = `for p in /proc/[0-9]*; do grep -qs '` + AgentMark + `' "$p/environ" && kill -9 "${p#/proc/}" 2>/dev/null; done; true`

// KillAgent kills what the agent left running in the container: a killed
// exec client does not end what it started there (the engine proxies no
// signal to it). Like Stop it is bounded by stopTimeout: a wedged engine
// must not hold the run.
func (r *Running) KillAgent(ctx context.Context) error {
	kctx, cancel := context.WithTimeout(ctx, stopTimeout)
	defer cancel()
	_, err := Run(kctx, append(r.eng.ExecArgs(r.Name, "/", nil), "sh", "-c", killMarked))
	if err != nil && ctx.Err() == nil && kctx.Err() != nil {
		return fmt.Errorf("isolate %s exec: not done within %v", r.eng.Name, stopTimeout)
	}
	return err
}

// Remove removes container name (RemoveArgs), even once ctx is done (a
// cancelled create may have made it), within stopTimeout as Stop.
func (e *Engine) Remove(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	_, err := Run(ctx, e.RemoveArgs(name))
	return err
}
