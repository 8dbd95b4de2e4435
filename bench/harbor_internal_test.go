package bench

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/privtmp"

	"github.com/stretchr/testify/require"
)

func TestRewritePaths(t *testing.T) {
	m := map[string]string{"/app": "/r/app", "/tests": "/r/tests", "/logs": "/r/logs"}
	for in, want := range map[string]string{
		"cat /app/hello.txt":                  "cat /r/app/hello.txt",
		"cd /app && ls":                       "cd /r/app && ls",
		`open("/app/x")`:                      `open("/r/app/x")`,
		"echo 1 > /logs/verifier/reward.txt":  "echo 1 > /r/logs/verifier/reward.txt",
		"/tests/test_outputs.py":              "/r/tests/test_outputs.py",
		"/apple /x/app /app_data ./app ~/app": "/apple /x/app /app_data ./app ~/app",
		"a=/app:/tests":                       "a=/r/app:/r/tests",
		"/app":                                "/r/app",
		"/app /tests\n/logs\t'/app'":          "/r/app /r/tests\n/r/logs\t'/r/app'",
		"":                                    "",
		"no path here":                        "no path here",
	} {
		require.Equal(t, want, rewritePaths(in, m), in)
	}
}

// TestRewritePathsOnce: the text is rewritten in one pass. WORKDIR /tmp
// under --isolate none maps /tmp (and /logs, /tests) to the run's
// directories, which lie under the host's /tmp: a replacement holds a
// path of the map again, and is never rewritten (before, the loop that
// rewrote until nothing changed grew the text for ever, deaf to the
// bench's cancel, and a shorter path was rewritten inside a longer one's
// replacement). Of paths that start at one place the longest that stands
// as a path wins.
func TestRewritePathsOnce(t *testing.T) {
	run := "/tmp/harness-benchrun-1/001-t-nop-r1/"
	m := map[string]string{"/tmp": run + "app", "/logs": run + "logs", "/tests": run + "tests", "/solution": run + "solution"}
	for in, want := range map[string]string{
		"echo 1 > /logs/verifier/reward.txt": "echo 1 > " + run + "logs/verifier/reward.txt",
		"cd /tmp && ls /tmp/x /tests":        "cd " + run + "app && ls " + run + "app/x " + run + "tests",
		"/tmp/tmp /tmpx /x/tmp":              run + "app/tmp /tmpx /x/tmp",
	} {
		require.Equal(t, want, rewritePaths(in, m), in)
	}
	nested := map[string]string{"/app": "/r/app", "/app/src": "/s"}
	require.Equal(t, "/s/x /r/app/srcs /r/app /s", rewritePaths("/app/src/x /app/srcs /app /app/src", nested))
	big := strings.Repeat("cat /tmp/a /logs/b\n", 1<<14)
	require.Equal(t, strings.Repeat("cat "+run+"app/a "+run+"logs/b\n", 1<<14), rewritePaths(big, m))
}

func TestReadDockerfile(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/Dockerfile"
	write := func(s string) {
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	}
	write("FROM a AS build\nWORKDIR /src\nCOPY x /src/\nFROM b\nWORKDIR /work\nWORKDIR sub\nCOPY --chown=1:1 a.txt b.txt ./\nCOPY --from=build /src/x /work/sub/x\nCOPY [\"c d.txt\", \"/work/sub/e.txt\"]\nRUN echo \\\n  hi\n")
	wd, copies, err := readDockerfile(p, false)
	require.NoError(t, err)
	require.Equal(t, "/work/sub", wd)
	require.Equal(t, []dockerCopy{{Srcs: []string{"a.txt", "b.txt"}, Dest: "/work/sub/"}, {Srcs: []string{"c d.txt"}, Dest: "/work/sub/e.txt"}}, copies)
	write("FROM a\nRUN true\n")
	wd, _, err = readDockerfile(p, false)
	require.NoError(t, err)
	require.Equal(t, "/app", wd, "no WORKDIR: /app")
}

// A failure of a clean-up deferred in harbor (here the run directory's
// removal) is in the report it returns.
func TestHarborCleanupErrorReported(t *testing.T) {
	removeRunDir = func(string) error { return errors.New("boom: device busy") }
	t.Cleanup(func() { removeRunDir = privtmp.RemoveAll })
	tasks, err := LoadTasks("testdata/harbor/create-file")
	require.NoError(t, err)
	rep, err := Run(t.Context(), Plan{Tasks: tasks, Agents: []string{"nop"}}, Options{Dir: t.TempDir()})
	require.NoError(t, err)
	require.Len(t, rep.Runs, 1)
	require.Equal(t, "removing the run directory: boom: device busy", rep.Runs[0].Error)
}

// A verifier that cannot even start because the bench was cancelled
// (podman's exec of the copy failing with "context canceled") gives no
// verdict, as a cancelled check does: not a verifier_error.
func TestVerifierFailureWhenCancelled(t *testing.T) {
	task := t.TempDir() // no tests/: copying it in fails
	r := &harborRun{dir: t.TempDir(), h: &HarborTask{Dir: task, Workdir: "/app"}, engine: "none"}
	c := r.verify(t.Context())
	require.Equal(t, OutcomeVerifierError, c.Outcome, "not cancelled: a failure")
	require.Contains(t, c.Detail, "copying tests/")
	require.Empty(t, c.Error)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	c = r.verify(ctx)
	require.Equal(t, "cancelled", c.Error)
	require.Empty(t, c.Outcome)
	require.Empty(t, c.Detail)
	require.False(t, c.Passed)
	require.False(t, final(RunReport{Agent: "oracle", Status: "success", Check: c}), "not recorded")
}

// The observer Setup returns (--mock's scripted model and its throwaway
// HOME) is closed once when the run fails before its agent starts: by
// drive when what the task asks cannot be set up, by Start when the task
// cannot run.
func TestObserverClosedOnSetupFailure(t *testing.T) {
	for name, c := range map[string]struct {
		agent  string
		adjust func(*harness.Task) error
	}{
		"adjust": {"nop", func(*harness.Task) error { return errors.New("the container did not start") }},
		"start":  {"no-such-agent", nil},
	} {
		t.Run(name, func(t *testing.T) {
			closed := 0
			b := &bencher{now: time.Now, opts: Options{Setup: func(s Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
				return tk, harness.Observer{Close: func(*event.Result) { closed++ }}, nil
			}}}
			var rr RunReport
			b.drive(t.Context(), Spec{Agent: c.agent}, harness.Task{Agent: c.agent, Prompt: "x", Cwd: t.TempDir()}, nil, &rr, nil, c.adjust, nil)
			require.Equal(t, ReasonSetup, rr.Reason, rr.Error)
			require.Equal(t, 1, closed)
		})
	}
}
