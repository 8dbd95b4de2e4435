package serve_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/serve"
)

// startingSession is a live session that ends when its context is
// cancelled (the server's interrupt of a session), or at kill.
type startingSession struct {
	ctx  context.Context
	kill chan struct{}
}

func (s *startingSession) Send(string) error             { return nil }
func (s *startingSession) Interrupt()                    {}
func (s *startingSession) Answer(string, bool) bool      { return false }
func (s *startingSession) Close() (*event.Result, error) { return s.Wait() }
func (s *startingSession) Wait() (*event.Result, error) {
	select {
	case <-s.ctx.Done():
		return &event.Result{Status: "cancelled"}, nil
	case <-s.kill:
		return &event.Result{Status: "success"}, nil
	}
}

// TestInterruptWhileStarting: a cancel, or the server's Close, that
// comes while a run is starting (registered, its start not returned:
// the agent's process starting) stops the run as soon as it started.
// It was lost: the cancel answered 202 and did nothing, and Close waited
// for the run to end by itself, up to its hard budget.
func TestInterruptWhileStarting(t *testing.T) {
	for _, how := range []string{"cancel", "close"} {
		t.Run(how, func(t *testing.T) {
			entered, release, kill := make(chan string, 1), make(chan struct{}), make(chan struct{})
			f := newFixtureWith(t, "serve-gated", func(cfg *serve.Config) {
				dir := cfg.Dir
				cfg.Launcher.StartSession = func(ctx context.Context, task harness.Task, _ harness.SessionOptions) (serve.Session, error) {
					// The library makes the log first: the run resolves while it starts.
					if err := os.MkdirAll(dir, 0o700); err != nil {
						return nil, err
					}
					if err := os.WriteFile(filepath.Join(dir, task.Run+".ndjson"), nil, 0o600); err != nil {
						return nil, err
					}
					entered <- task.Run
					<-release
					return &startingSession{ctx: ctx, kill: kill}, nil
				}
			})
			t.Cleanup(func() { close(kill) }) // before the fixture's Close: a run not interrupted ends
			started := make(chan int, 1)
			go func() {
				req, _ := http.NewRequest("POST", f.http.URL+"/api/runs", strings.NewReader(`{"agent":"claude","session":true}`))
				req.Header.Set("Authorization", "Bearer "+f.api.Token)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					started <- 0
					return
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusCreated {
					t.Logf("POST /api/runs: %s", b)
				}
				started <- res.StatusCode
			}()
			var run string
			select {
			case run = <-entered:
			case st := <-started:
				t.Fatalf("POST /api/runs answered %d before the run started", st)
			}
			closed := make(chan struct{})
			if how == "cancel" {
				st, b := f.post(t, "/api/runs/"+run+"/cancel", "")
				require.Equal(t, http.StatusAccepted, st, b)
			} else {
				go func() { f.srv.Close(); close(closed) }()
				for !serve.Closing(f.srv) { // Close has told the runs it holds to stop
					time.Sleep(time.Millisecond)
				}
			}
			close(release)
			require.Equal(t, http.StatusCreated, <-started)
			ended := make(chan struct{})
			go func() { serve.LiveRuns(f.srv); close(ended) }()
			select {
			case <-ended:
			case <-time.After(10 * time.Second):
				t.Fatalf("the run was not interrupted: it runs on after the %s", how)
			}
			if how == "close" {
				<-closed
			}
		})
	}
}
