package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/fifotest"
)

// What harness does with its inputs and outputs when they are not what a
// command expects: an -o that is the input, a directory on stdin, a
// reader that leaves, a full disk, a named pipe where a file is read.

// claudeCapture copies a captured Claude stream into dir and returns its
// path.
func claudeCapture(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(pkgDir, "..", "..", "testdata", "claude", "edits.jsonl"))
	require.NoError(t, err)
	p := filepath.Join(dir, "cap.jsonl")
	require.NoError(t, os.WriteFile(p, data, 0o600))
	return p
}

// TestParseRefusesOutputThatIsItsInput: an -o naming the file parse
// reads (by its name, through a link, or as stdin) is a usage error, and
// the capture is left whole: creating -o truncated it before a line was
// read.
func TestParseRefusesOutputThatIsItsInput(t *testing.T) {
	home := isolate(t)
	capture := claudeCapture(t, home)
	want, err := os.ReadFile(capture)
	require.NoError(t, err)
	link := filepath.Join(home, "link.jsonl")
	require.NoError(t, os.Symlink(capture, link))
	hard := filepath.Join(home, "hard.jsonl")
	require.NoError(t, os.Link(capture, hard))
	for _, tc := range []struct {
		name  string
		stdin bool
		args  []string
	}{
		{"same-name", false, []string{capture, "-o", capture}},
		{"relative", false, []string{"cap.jsonl", "-o", "./cap.jsonl"}},
		{"symlink", false, []string{capture, "-o", link}},
		{"hard-link", false, []string{hard, "-o", capture}},
		{"stdin", true, []string{"-o", capture}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in *os.File
			if tc.stdin {
				in, err = os.Open(capture)
				require.NoError(t, err)
				defer in.Close()
			}
			var out, errb bytes.Buffer
			code := run(append([]string{"parse", "-a", "claude"}, tc.args...), in, &out, &errb)
			require.Equal(t, exitUsage, code, errb.String())
			require.Empty(t, out.String())
			require.Regexp(t, `^harness: parse: -o \S+ is the file read: writing it would erase the stream before it is read\n$`, errb.String())
			got, err := os.ReadFile(capture)
			require.NoError(t, err)
			require.Equal(t, want, got, "the capture is intact")
		})
	}
	// Another file is written as ever, and a device is no file to erase.
	r := invoke(t, "", "parse", "-a", "claude", capture, "-o", filepath.Join(home, "out.ndjson"))
	require.Equal(t, exitOK, r.code, r.stderr)
	r = invoke(t, "", "parse", "-a", "claude", os.DevNull, "-o", os.DevNull)
	require.Equal(t, exitAgentFailed, r.code, "an empty stream has no terminal event")
	require.Empty(t, r.stderr)
}

// TestParseUsageErrors: a protocol the agent does not speak and a
// directory on stdin are usage errors (2), as run's and a directory
// given by name are, with one line and nothing on stdout: parse exited 1
// for the first, and printed a whole failed stream for the second.
func TestParseUsageErrors(t *testing.T) {
	home := isolate(t)
	capture := claudeCapture(t, home)
	r := invoke(t, "", "parse", "-a", "gemini", "--protocol", "stream-json", capture)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Equal(t, "harness: parse: protocol \"stream-json\" is claude's own: gemini does not speak it\n", r.stderr)

	dir, err := os.Open(home)
	require.NoError(t, err)
	defer dir.Close()
	var out, errb bytes.Buffer
	code := run([]string{"parse", "-a", "claude"}, dir, &out, &errb)
	require.Equal(t, exitUsage, code, errb.String())
	require.Empty(t, out.String())
	require.Equal(t, "harness: parse: stdin is a directory: give one captured stream (a .jsonl file)\n", errb.String())
}

// harnessBinary is harness as a program of its own (testscript.Main put
// it first on PATH), for what only a process shows: a signal's effect.
func harnessBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(filepath.SplitList(os.Getenv("PATH"))[0], "harness")
	_, err := os.Stat(bin)
	require.NoError(t, err)
	return bin
}

// TestParseReaderLeavesQuietly: when the reader of parse's stdout goes
// away (| head -1), parse ends with status 1 and says nothing. (The
// runtime killed it with SIGPIPE, 141 in a shell, and its check for a
// closed pipe never matched the EPIPE a write to one returns.)
func TestParseReaderLeavesQuietly(t *testing.T) {
	home := isolate(t)
	one, err := os.ReadFile(claudeCapture(t, home))
	require.NoError(t, err)
	// Far more than the pipe and parse's buffer hold: writing must go on
	// after the reader has left.
	big := filepath.Join(home, "big.jsonl")
	require.NoError(t, os.WriteFile(big, bytes.Repeat(one, 400), 0o600))

	r, w, err := os.Pipe()
	require.NoError(t, err)
	cmd := exec.Command(harnessBinary(t), "parse", "-a", "claude", big)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &errb
	require.NoError(t, cmd.Start())
	w.Close()
	line, err := bufio.NewReader(r).ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, line, `"type":"session_start"`)
	r.Close() // as head -1 does once it has its line
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr: %s", errb.String())
	ws := ee.Sys().(syscall.WaitStatus)
	require.False(t, ws.Signaled(), "killed by %v", ws.Signal())
	require.Equal(t, exitAgentFailed, ee.ExitCode())
	require.Empty(t, errb.String())
}

// TestRunReaderLeavesEveryFormat: a reader of stdout that goes away ends
// the run as an interrupt (130), quietly, whatever the format: -f json
// writes only at the end, once the run is over, and exited 0 when that
// write found the reader gone.
func TestRunReaderLeavesEveryFormat(t *testing.T) {
	isolate(t)
	argv, _ := fakeagent.Command("result-then-linger")
	for _, format := range []string{"json", "ndjson", "text"} {
		t.Run(format, func(t *testing.T) {
			var errb bytes.Buffer
			code := run([]string{"run", "--agent", "claude", "--binary", argv[0], "--env", fakeagent.EnvVar + "=result-then-linger",
				"-p", "go", "--linger", "100ms", "--no-log", "-f", format}, strings.NewReader(""), failingWriter{syscall.EPIPE}, &errb)
			require.Equal(t, exitInterrupted, code, "stderr: %s", errb.String())
			require.Empty(t, errb.String())
		})
	}
}

// TestOutputErrorsAreReported: config path and check print through
// writes whose errors were dropped (exit 0 into a full disk); like every
// other command, they exit 1 with the error's line.
func TestOutputErrorsAreReported(t *testing.T) {
	isolate(t)
	full := &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.ENOSPC}
	for _, args := range [][]string{{"config", "path"}, {"check", "nop"}} {
		var errb bytes.Buffer
		code := run(args, strings.NewReader(""), failingWriter{full}, &errb)
		require.Equal(t, exitAgentFailed, code, "%q: %s", args, errb.String())
		require.Equal(t, "harness: write /dev/stdout: no space left on device\n", errb.String(), "%q", args)
	}
	// A closed pipe, for real.
	r, w, err := os.Pipe()
	require.NoError(t, err)
	r.Close()
	defer w.Close()
	var errb bytes.Buffer
	code := run([]string{"config", "path"}, strings.NewReader(""), w, &errb)
	require.Equal(t, exitAgentFailed, code)
	require.Equal(t, "harness: write |1: broken pipe\n", errb.String())
}

// TestNamedPipeConfigIsAnError: a named pipe where harness reads its
// configuration (harness.toml, the user's config) is a config error (2)
// with one line, and one at the model cache a warning before the
// built-in table, as for a damaged cache: each hung every command,
// waiting in its open for a writer.
func TestNamedPipeConfigIsAnError(t *testing.T) {
	home := isolate(t)
	mkfifo := func(t *testing.T, path string) {
		fifotest.Make(t, path)
		t.Cleanup(func() { os.Remove(path) })
	}
	t.Run("project", func(t *testing.T) {
		mkfifo(t, filepath.Join(home, "harness.toml"))
		r := invoke(t, "", "config", "show")
		require.Equal(t, exitUsage, r.code, r.stderr)
		require.Equal(t, "harness: harness.toml: not a regular file (a FIFO)\n", r.stderr)
	})
	t.Run("user", func(t *testing.T) {
		user := filepath.Join(home, ".config", "harness", "config.toml")
		mkfifo(t, user)
		r := invoke(t, "", "run", "-a", "nop", "-p", "x", "--dry-run")
		require.Equal(t, exitUsage, r.code, r.stderr)
		require.Equal(t, "harness: "+user+": not a regular file (a FIFO)\n", r.stderr)
	})
	t.Run("model-cache", func(t *testing.T) {
		cache := filepath.Join(home, ".cache", "harness", "models.toml")
		mkfifo(t, cache)
		r := invoke(t, "", "models", "resolve", "sonnet", "-a", "claude")
		require.Equal(t, exitOK, r.code, r.stderr)
		require.NotEmpty(t, r.stdout)
		require.Equal(t, "harness: warning: registry: read model cache: open "+cache+": not a regular file (a FIFO); using the built-in model registry (refresh it with 'harness models update' or delete it)\n", r.stderr)
	})
}
