package serve_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/serve"
)

func init() {
	fakeagent.Register("serve-escapee-pidfile", escapeePidfile)
	fakeagent.Register("serve-panicking-stop", servePanickingStop)
}

// serve-escapee-pidfile: a Claude Code CLI that starts a sleeper in a
// session of its own (deaf to SIGTERM), writes its pid to $PIDFILE and
// hangs.
func escapeePidfile([]string) int {
	claudeInit()
	argv, env := fakeagent.Command("sleeper", "ignore-term")
	c := exec.Command(argv[0], argv[1:]...)
	c.Env = env
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		return 3
	}
	if err := os.WriteFile(os.Getenv("PIDFILE"), []byte(strconv.Itoa(c.Process.Pid)), 0o600); err != nil {
		return 3
	}
	for {
		time.Sleep(time.Hour)
	}
}

// serve-panicking-stop: a program serving the API whose AttachMock's stop
// panics (the server calls it on its goroutine that waits for the run,
// at the run's end). It starts a run of serve-escapee-pidfile (mock
// "escapee"), prints the pid of its sleeper, then a run that ends at
// once (mock "panic").
func servePanickingStop([]string) int {
	dir, err := os.MkdirTemp("", "serve-panicking-stop")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	pidfile := filepath.Join(dir, "pid")
	argv, env := fakeagent.Command("exit-0-without-terminal-event")
	const token = "test-token-0123456789abcdef"
	srv := serve.New(serve.Config{Dir: filepath.Join(dir, "sessions"), Token: token,
		Launcher: serve.Launcher{Settings: fakeSettings(filepath.Join(dir, "sessions"), argv[0], env),
			AttachMock: func(t *harness.Task, scenario string) (func(), error) {
				if scenario == "escapee" {
					t.Env = append(t.Env, fakeagent.EnvVar+"=serve-escapee-pidfile", "PIDFILE="+pidfile)
				}
				return func() {
					if scenario == "panic" {
						panic("a bug in the mock's stop")
					}
				}, nil
			}}})
	for _, mock := range []string{"escapee", "panic"} {
		req := httptest.NewRequest("POST", "/api/runs", strings.NewReader(`{"agent":"claude","prompt":"x","cwd":`+strconv.Quote(dir)+`,"mock":"`+mock+`"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			fmt.Fprintln(os.Stderr, rec.Code, rec.Body.String())
			return 1
		}
		for mock == "escapee" {
			if b, err := os.ReadFile(pidfile); err == nil && len(b) > 0 {
				fmt.Println(string(b))
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	select {} // the panic ends the program
}

// TestRunWaiterPanicEndsTheRuns: a panic at a run's end on the server's
// goroutine that waits for the run (here: the stop of the Launcher's
// mock) takes the program down with its trace, but every run of it is
// ended first: the sleeper another run's agent started in a session of
// its own is gone.
func TestRunWaiterPanicEndsTheRuns(t *testing.T) {
	t.Parallel()
	harnesstest.RequirePanicEndsRuns(t, "serve-panicking-stop", "panic: a bug in the mock's stop", "the agent's sleeper outlived the server's panic")
}
