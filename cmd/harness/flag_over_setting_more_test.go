package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
)

// TestBenchBoolFlagsOverSettings: bench's --pty=false and --no-log=false
// win over HARNESS_PTY and HARNESS_NO_LOG, as run's do. Before, a false
// flag was "not given": HARNESS_PTY=1 ran every agent on a terminal and
// HARNESS_NO_LOG=1 kept no log whatever the flags said.
func TestBenchBoolFlagsOverSettings(t *testing.T) {
	bench := func(t *testing.T, home string, flags ...string) []event.Event {
		t.Helper()
		events := filepath.Join(home, "all.ndjson")
		r := invoke(t, "", benchArgs(t, "bench-cli-writer", append([]string{"--agents", "claude", "-p", "write out.txt",
			"--workdir", benchSource(t), "--report", "json", "--no-store", "--events", events}, flags...)...)...)
		require.Equal(t, 0, r.code, r.stderr)
		b, err := os.ReadFile(events)
		require.NoError(t, err)
		evs, err := event.ReadAll(bytes.NewReader(b))
		require.NoError(t, err)
		return evs
	}
	pty := func(evs []event.Event) bool { return evs[0].Body.(*event.SessionStart).PTY }
	t.Run("pty", func(t *testing.T) {
		home := isolate(t)
		t.Setenv("HARNESS_PTY", "1")
		require.True(t, pty(bench(t, home)), "HARNESS_PTY=1 runs the agents on a terminal")
		require.False(t, pty(bench(t, home, "--pty=false")), "--pty=false runs them without one")
	})
	t.Run("no-log", func(t *testing.T) {
		home := isolate(t)
		t.Setenv("HARNESS_NO_LOG", "1")
		bench(t, home)
		require.Zero(t, sessionLogs(t, home), "HARNESS_NO_LOG=1 keeps no log")
		bench(t, home, "--no-log=false")
		require.Equal(t, 1, sessionLogs(t, home), "--no-log=false keeps one")
	})
}

// TestBenchK8sJobForwardsBoolFlags: k8s-job gives the pods bench's
// --pty and --no-log as given, off as well as on, so that the pods' own
// settings do not win over them; not given, they stay out.
func TestBenchK8sJobForwardsBoolFlags(t *testing.T) {
	isolate(t)
	podArgs := func(flags ...string) []string {
		t.Helper()
		args := append(append([]string{"bench", "--agents", "claude", "-p", "x"}, flags...), "k8s-job", "--shards", "2", "--image", "i")
		r := invoke(t, "", args...)
		require.Equal(t, 0, r.code, r.stderr)
		var job batchv1.Job
		require.NoError(t, yaml.UnmarshalStrict([]byte(r.stdout), &job))
		return job.Spec.Template.Spec.Containers[0].Args
	}
	for _, c := range []struct {
		flags, want, not []string
	}{
		{nil, nil, []string{"--pty", "--pty=false", "--no-log", "--no-log=false"}},
		{[]string{"--pty", "--no-log"}, []string{"--pty", "--no-log"}, []string{"--pty=false", "--no-log=false"}},
		{[]string{"--pty=false", "--no-log=false"}, []string{"--pty=false", "--no-log=false"}, []string{"--pty", "--no-log"}},
		{[]string{"--otlp", "http://collector:4318"}, nil, []string{"--otlp-content", "--otlp-content=false"}},
		{[]string{"--otlp", "http://collector:4318", "--otlp-content"}, []string{"--otlp-content"}, []string{"--otlp-content=false"}},
		{[]string{"--otlp", "http://collector:4318", "--otlp-content=false"}, []string{"--otlp-content=false"}, []string{"--otlp-content"}},
	} {
		got := podArgs(c.flags...)
		for _, w := range c.want {
			require.Contains(t, got, w, "%v", c.flags)
		}
		for _, n := range c.not {
			require.NotContains(t, got, n, "%v", c.flags)
		}
	}
}

// TestMCPNoLogFlagOverSetting: mcp's --no-log=false keeps session logs
// of the runs over log = false in harness.toml.
func TestMCPNoLogFlagOverSetting(t *testing.T) {
	// The run's session log, as run_agent reports it ("" when none).
	sessionLog := func(t *testing.T, flags ...string) string {
		t.Helper()
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		var stderr bytes.Buffer
		status := make(chan int, 1)
		go func() {
			status <- run(append([]string{"mcp"}, flags...), inR, outW, &stderr)
			outW.Close()
		}()
		client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
		cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_agent",
			Arguments: map[string]any{"agent": "claude", "prompt": "go"}})
		require.NoError(t, err)
		require.False(t, res.IsError, "%s", harnesstest.MCPText(res))
		s := harnesstest.MCPStructured(t, res)
		require.Equal(t, "success", s.Get("state").String())
		require.NoError(t, cs.Close())
		inW.Close()
		select {
		case code := <-status:
			require.Equal(t, 0, code, stderr.String())
		case <-time.After(20 * time.Second):
			t.Fatal("harness mcp did not end when its client went away")
		}
		return s.Get("summary.session_log").String()
	}
	home := isolateWith(t, "log = false\n"+fakeClaude("echo-env"))
	require.Empty(t, sessionLog(t), "log = false keeps no log")
	require.Zero(t, sessionLogs(t, home))
	require.NotEmpty(t, sessionLog(t, "--no-log=false"), "--no-log=false keeps one")
	require.Equal(t, 1, sessionLogs(t, home))
}

// TestACPNoLogFlagOverSetting: acp's --no-log=false keeps session logs
// of the prompts' runs over log = false in harness.toml.
func TestACPNoLogFlagOverSetting(t *testing.T) {
	for name, c := range map[string]struct {
		flags []string
		logs  int
	}{
		"setting": {nil, 0},
		"flag":    {[]string{"--no-log=false"}, 1},
	} {
		t.Run(name, func(t *testing.T) {
			home := isolateWith(t, "log = false\n")
			argv, _ := fakeagent.Command("acp-agent")
			args := append([]string{"acp", "--agent", "fake", "--protocol", "acp", "--command", argv[0], "--command", "normal",
				"--env", fakeagent.EnvVar + "=acp-agent", "--linger", "200ms", "--kill-grace", "200ms"}, c.flags...)
			conn, _, sid, _ := harnesstest.ServeACP(t, func(in io.Reader, out io.Writer) {
				assert.Equal(t, 0, run(args, in, out, io.Discard), "harness acp's exit status")
			})
			ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
			defer cancel()
			_, err := conn.Prompt(ctx, harnesstest.Prompt(sid, "write hello.txt"))
			require.NoError(t, err)
			require.Equal(t, c.logs, sessionLogs(t, home))
		})
	}
}
