package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
)

// updating reports -update, which adaptertest defines for every golden test.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// pkgDir is this package's directory, taken before any test changes the cwd.
var pkgDir, _ = os.Getwd()

// capturedAgents are the agents of harness's table that have captures in
// testdata/, in display order: the CLIs, not oracle and nop (which take
// no prompt and print no native stream).
func capturedAgents() []string {
	var ids []string
	for _, id := range harness.AgentNames() {
		if _, err := os.Stat(filepath.Join(pkgDir, "..", "..", "testdata", id)); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

func TestMain(m *testing.M) {
	harnesstest.RunChild()
	harnesstest.ContainersConf()
	testscript.Main(m, scriptCommands) // runs harness or a fake when started as one, else the tests
}

type result struct {
	code           int
	stdout, stderr string
}

// invoke runs the CLI in-process with a private HOME and XDG dirs, so no
// test reads or writes the real user's config or session logs.
func invoke(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

// isolate points HOME and the XDG dirs at a temp dir for this test.
func isolate(t testing.TB) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "HARNESS_") && k != fakeagent.EnvVar {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	t.Chdir(home)
	return home
}

// isolateWith is isolate with toml as the new home's harness.toml.
func isolateWith(t *testing.T, toml string) string {
	t.Helper()
	home := isolate(t)
	require.NoError(t, os.WriteFile(filepath.Join(home, "harness.toml"), []byte(toml), 0o644))
	return home
}

// fakeClaude is the configuration that runs fake as claude.
func fakeClaude(fake string) string {
	argv, _ := fakeagent.Command(fake)
	return fmt.Sprintf("[agents.claude]\nbinary = %q\nenv = { %s = %q }\n", argv[0], fakeagent.EnvVar, fake)
}

// runFake runs a fake agent through 'harness run' as the claude adapter.
func runFake(t *testing.T, fake string, args ...string) result {
	t.Helper()
	argv, env := fakeagent.Command(fake)
	for _, kv := range env {
		if strings.HasPrefix(kv, fakeagent.EnvVar+"=") {
			t.Setenv(fakeagent.EnvVar+"_FOR_CHILD", strings.TrimPrefix(kv, fakeagent.EnvVar+"="))
		}
	}
	full := append([]string{"run", "--agent", "claude", "--binary", argv[0], "--env", fakeagent.EnvVar + "=" + fake, "-p", "go"}, args...)
	return invoke(t, "", full...)
}

// brokenStdout fails every write after the first, as a pipe whose reader
// has gone (| head -1).
type brokenStdout struct{ n int }

func (w *brokenStdout) Write(p []byte) (int, error) {
	w.n++
	if w.n > 1 {
		return 0, syscall.EPIPE
	}
	return len(p), nil
}

func TestRunStopsWhenStdoutGoes(t *testing.T) {
	home := isolate(t)
	// The agent keeps printing, so a write soon finds the reader gone (a
	// silent agent would only be noticed at its next output).
	argv, _ := fakeagent.Command("slow-drip")
	var errb bytes.Buffer
	start := time.Now()
	code := run([]string{"run", "--agent", "claude", "--binary", argv[0], "--env", fakeagent.EnvVar + "=slow-drip",
		"-p", "go", "--kill-grace", "1s"}, strings.NewReader(""), &brokenStdout{}, &errb)
	require.Less(t, time.Since(start), 30*time.Second, "the run must stop once stdout is gone")
	require.Equal(t, exitInterrupted, code, "stderr: %s", errb.String())
	logged, err := filepath.Glob(filepath.Join(home, ".local", "share", "harness", "sessions", "run_*.ndjson"))
	require.NoError(t, err)
	require.Len(t, logged, 1)
	data, err := os.ReadFile(logged[0])
	require.NoError(t, err)
	adaptertest.CheckStream(t, data) // the session log still holds the whole stream
}

// TestOneCommandGrammarChangesNothing: the parser built from the named
// command alone parses, runs and reports exactly as the whole tree does.
func TestOneCommandGrammarChangesNothing(t *testing.T) {
	isolate(t)
	whole := func(c *cli, _ []string) any { return c }
	for _, args := range [][]string{
		{"run", "--help"}, {"run"}, {"run", "--bogus"}, {"run", "-a", "nope", "-p", "x", "--dry-run"},
		{"run", "-a", "claude", "-p", "x", "--permisions", "read-only", "--dry-run"}, {"run", "-p", "x", "stray", "--", "--y"},
		{"run", "-a", "claude", "-p", "-starts with a dash", "--dry-run", "--binary", "/bin/true"},
		{"parse", "--help"}, {"parse"}, {"parse", "-a", "codex", "/nonexistent"},
		{"list"}, {"check", "--help"}, {"conform", "--help"}, {"conform", "--scenario", "nope"}, {"models", "--help"}, {"models", "list"}, {"models", "bogus"},
		{"config", "path"}, {"sessions", "--help"}, {"mock", "--help"}, {"schema"}, {"mcp", "--help"},
		{"bench", "--help"}, {"bench", "compare", "--help"}, {"bench", "k8s-job", "--help"}, {"sessions", "list", "--help"},
		{"serve", "--help"}, {"acp", "--help"}, {"config", "show", "--help"}, {"version"}, {"--version"}, {"-V"}, {"--version", "--help"}, {"--help"}, {"nope"}, {"Run"},
	} {
		var wantOut, wantErr, gotOut, gotErr bytes.Buffer
		want := runGrammar(whole, args, strings.NewReader(""), &wantOut, &wantErr)
		got := runGrammar(grammar, args, strings.NewReader(""), &gotOut, &gotErr)
		require.NotEmpty(t, wantOut.String()+wantErr.String(), "%q says something", args)
		require.Equal(t, want, got, "%q: status", args)
		require.Equal(t, wantOut.String(), gotOut.String(), "%q: stdout", args)
		require.Equal(t, wantErr.String(), gotErr.String(), "%q: stderr", args)
	}
}

// failingWriter fails every write with err.
type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// countingReader serves n copies of line and counts the bytes read.
type countingReader struct {
	line []byte
	n    int
	read int
	buf  []byte
}

func (c *countingReader) Read(p []byte) (int, error) {
	for len(c.buf) < len(p) && c.n > 0 {
		c.buf = append(c.buf, c.line...)
		c.n--
	}
	if len(c.buf) == 0 {
		return 0, io.EOF
	}
	k := copy(p, c.buf)
	c.buf = c.buf[k:]
	c.read += k
	return k, nil
}

// TestParseStopsWhenWritingFails: a failed write ends the parse with its
// error (a reader that left, a closed pipe, silently) instead of reading
// the rest of the input for nobody.
func TestParseStopsWhenWritingFails(t *testing.T) {
	isolate(t)
	line := []byte(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}},"session_id":"s"}` + "\n")
	const lines = 200000 // about 25 MB
	for _, tc := range []struct {
		err    error
		stderr string
	}{{errors.New("disk full"), "parse: writing: disk full"}, {io.ErrClosedPipe, ""}} {
		in := &countingReader{line: line, n: lines}
		var errb bytes.Buffer
		code := run([]string{"parse", "--agent", "claude"}, in, failingWriter{tc.err}, &errb)
		require.Equal(t, exitAgentFailed, code)
		if tc.stderr == "" {
			require.Empty(t, errb.String())
		} else {
			require.Contains(t, errb.String(), tc.stderr)
		}
		require.Less(t, in.read, lines*len(line)/2, "the input is not read to the end")
	}
}
