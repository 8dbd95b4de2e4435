package main

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/internal/otlptest"
	"github.com/agentharness/harness/otlp"
)

// sessionLogs counts the session logs (their meta files) under the
// isolated home's data directory.
func sessionLogs(t *testing.T, home string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(home, ".local", "share"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".meta.json") {
			n++
		}
		return nil
	})
	require.NoError(t, err)
	return n
}

// TestRunBoolFlagsOverSettings: a boolean flag given wins over the
// setting (env or harness.toml) both ways: --pty=false, --raw=false and
// --no-log=false turn off what HARNESS_PTY, HARNESS_RAW or raw = true and
// HARNESS_NO_LOG turn on. Before, a false flag was "not given": the
// library or-ed it with the setting, and the setting won.
func TestRunBoolFlagsOverSettings(t *testing.T) {
	// stream is the run's count of native events and whether its agent
	// ran on a terminal (session_start's pty).
	stream := func(t *testing.T, r result) (native int, pty bool) {
		t.Helper()
		require.Equal(t, 0, r.code, r.stderr)
		evs, err := event.ReadAll(strings.NewReader(r.stdout))
		require.NoError(t, err)
		return len(harnesstest.Bodies(evs, event.TypeNative)), evs[0].Body.(*event.SessionStart).PTY
	}
	t.Run("pty", func(t *testing.T) {
		isolate(t)
		t.Setenv("HARNESS_PTY", "1")
		_, pty := stream(t, runFake(t, "echo-env"))
		require.True(t, pty, "HARNESS_PTY=1 runs the agent on a terminal")
		_, pty = stream(t, runFake(t, "echo-env", "--pty=false"))
		require.False(t, pty, "--pty=false runs it without one")
	})
	t.Run("raw-env", func(t *testing.T) {
		isolate(t)
		t.Setenv("HARNESS_RAW", "1")
		n, _ := stream(t, runFake(t, "echo-env"))
		require.NotZero(t, n, "HARNESS_RAW=1 emits native events")
		n, _ = stream(t, runFake(t, "echo-env", "--raw=false"))
		require.Zero(t, n, "--raw=false emits none")
	})
	t.Run("raw-toml", func(t *testing.T) {
		isolateWith(t, "raw = true\n")
		n, _ := stream(t, runFake(t, "echo-env", "--raw=false"))
		require.Zero(t, n, "--raw=false emits none over raw = true")
		n, _ = stream(t, runFake(t, "echo-env", "--raw"))
		require.NotZero(t, n, "--raw still emits them")
	})
	t.Run("no-log", func(t *testing.T) {
		home := isolate(t)
		t.Setenv("HARNESS_NO_LOG", "1")
		stream(t, runFake(t, "echo-env"))
		require.Zero(t, sessionLogs(t, home), "HARNESS_NO_LOG=1 keeps no log")
		stream(t, runFake(t, "echo-env", "--no-log=false"))
		require.Equal(t, 1, sessionLogs(t, home), "--no-log=false keeps one")
	})
}

// TestSessionBoolFlagsOverSettings: session's --raw=false and
// --no-log=false win over HARNESS_RAW and HARNESS_NO_LOG, as run's do.
func TestSessionBoolFlagsOverSettings(t *testing.T) {
	home := isolate(t)
	t.Setenv("HARNESS_RAW", "1")
	t.Setenv("HARNESS_NO_LOG", "1")
	argv, _ := fakeagent.Command(fakeagent.ClaudeStream)
	session := func(flags ...string) []event.Event {
		r := invoke(t, `{"type":"prompt","text":"one"}`+"\n", append([]string{"session", "--agent", "claude",
			"--binary", argv[0], "--cwd", t.TempDir(), "--env", fakeagent.EnvVar + "=" + fakeagent.ClaudeStream,
			"--linger", "200ms"}, flags...)...)
		require.Equal(t, 0, r.code, r.stderr)
		return sessionStream(t, r)
	}
	evs := session()
	require.NotEmpty(t, harnesstest.Bodies(evs, event.TypeNative), "HARNESS_RAW=1 emits native events")
	require.Zero(t, sessionLogs(t, home), "HARNESS_NO_LOG=1 keeps no log")
	evs = session("--raw=false", "--no-log=false")
	require.Empty(t, harnesstest.Bodies(evs, event.TypeNative), "--raw=false emits none")
	require.Equal(t, 1, sessionLogs(t, home), "--no-log=false keeps a log")
}

// TestOTLPContentFlagOverSetting: --otlp-content=false keeps content off
// the export over HARNESS_OTLP_CONTENT=1 (it was or-ed with it), and each
// command that exports learns that the flag was given (otlpFlags'
// AfterApply, a promoted method that another AfterApply would hide).
func TestOTLPContentFlagOverSetting(t *testing.T) {
	t.Run("run", func(t *testing.T) {
		isolate(t)
		t.Setenv("HARNESS_OTLP_CONTENT", "1")
		exported := func(flags ...string) bool {
			col := otlptest.NewReceiver(t)
			r := runFake(t, "echo-env", append([]string{"--otlp", col.URL}, flags...)...)
			require.Equal(t, 0, r.code, r.stderr)
			_, spans, _ := col.Got()
			require.NotEmpty(t, spans)
			for _, s := range spans {
				if _, ok := s.Attributes().Get(otlp.AttrOutputMessages); ok {
					return true
				}
			}
			return false
		}
		require.True(t, exported(), "HARNESS_OTLP_CONTENT=1 exports the final answer")
		require.False(t, exported("--otlp-content=false"), "--otlp-content=false exports none")
	})
	for cmd, args := range map[string][]string{
		"run":   {"run", "-p", "x"},
		"mcp":   {"mcp"},
		"acp":   {"acp"},
		"serve": {"serve"},
		"bench": {"bench", "-p", "x", "--agents", "claude"},
	} {
		t.Run("given/"+cmd, func(t *testing.T) {
			flags := func(c *cli) *otlpFlags {
				return map[string]*otlpFlags{"run": &c.Run.otlpFlags, "mcp": &c.MCP.otlpFlags, "acp": &c.ACP.otlpFlags,
					"serve": &c.Serve.otlpFlags, "bench": &c.Bench.otlpFlags}[cmd]
			}
			for _, given := range []bool{false, true} {
				argv := args
				if given {
					argv = append(append([]string(nil), args...), "--otlp-content=false")
				}
				var c cli
				parser, err := kong.New(&c, parseVars(argv), kong.Exit(func(int) { t.Fatal("kong exited") }))
				require.NoError(t, err)
				_, err = parser.Parse(argv)
				require.NoError(t, err)
				require.Equal(t, given, flags(&c).contentGiven, "%v", argv)
			}
		})
	}
}
