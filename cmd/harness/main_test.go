package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/process"
)

// updating reports -update, which adaptertest defines for every golden test.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// pkgDir is this package's directory, taken before any test changes the cwd.
var pkgDir, _ = os.Getwd()

func TestMain(m *testing.M) {
	process.MaybeReap() // first: a re-executed test binary may be a run's reaper
	fakeagent.MaybeRun()
	os.Exit(m.Run())
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
func isolate(t *testing.T) string {
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

func TestVersionAndSchema(t *testing.T) {
	isolate(t)
	r := invoke(t, "", "--version")
	require.Equal(t, 0, r.code)
	require.Contains(t, r.stdout, "harness ")
	r = invoke(t, "", "schema")
	require.Equal(t, 0, r.code)
	require.True(t, json.Valid([]byte(r.stdout)))
	require.Equal(t, string(event.Schema), r.stdout)
}

func TestUsageErrors(t *testing.T) {
	isolate(t)
	for name, args := range map[string][]string{
		"unknown-command":   {"frobnicate"},
		"unknown-flag":      {"run", "--nope"},
		"unknown-agent":     {"run", "--agent", "nope", "-p", "x"},
		"bad-permissions":   {"run", "--agent", "claude", "--permissions", "root", "-p", "x"},
		"negative-budget":   {"run", "--agent", "claude", "--idle-timeout", "-5s", "-p", "x"},
		"bad-duration":      {"run", "--agent", "claude", "--timeout", "soon", "-p", "x"},
		"parse-no-agent":    {"parse", "x.jsonl"},
		"parse-bad-agent":   {"parse", "--agent", "nope"},
		"parse-missing":     {"parse", "--agent", "claude", "/nonexistent/file.jsonl"},
		"bad-env":           {"run", "--agent", "claude", "--env", "NOEQUALS", "-p", "x"},
		"prompt-twice":      {"run", "--agent", "claude", "-p", "x", "--prompt-file", "main.go"},
		"no-prompt-on-pipe": {"run", "--agent", "claude"},
	} {
		t.Run(name, func(t *testing.T) {
			r := invoke(t, "", args...)
			require.Equal(t, exitUsage, r.code, "stderr: %s", r.stderr)
			require.NotEmpty(t, r.stderr)
			require.NotContains(t, r.stderr, "panic")
			require.NotContains(t, r.stderr, "goroutine")
		})
	}
}

func TestConfigErrorExits2(t *testing.T) {
	home := isolate(t)
	require.NoError(t, os.WriteFile(filepath.Join(home, "harness.toml"), []byte("idle_timeout = \"5 minutes\"\n"), 0o644))
	r := invoke(t, "", "run", "--agent", "claude", "-p", "x", "--dry-run")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "idle_timeout")
	require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, "one line: %q", r.stderr)
}

// TestDryRunGolden holds the argv each agent gets per permission mode.
func TestDryRunGolden(t *testing.T) {
	home := isolate(t)
	bin := filepath.Join(home, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	for _, name := range []string{"claude", "codex", "cursor-agent", "opencode", "gemini"} {
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755))
	}
	t.Setenv("PATH", bin)
	for _, agent := range []string{"claude", "codex", "cursor", "opencode", "gemini"} {
		for _, perm := range []string{"full-access", "read-only"} {
			t.Run(agent+"-"+perm, func(t *testing.T) {
				r := invoke(t, "", "run", "--agent", agent, "--permissions", perm, "--model", "sonnet",
					"--prompt=-starts with a dash", "--dry-run", "--cwd", home)
				require.Equal(t, 0, r.code, r.stderr)
				got := strings.ReplaceAll(r.stdout, home, "$HOME")
				golden := filepath.Join(pkgDir, "testdata", "dryrun", agent+"-"+perm+".golden.json")
				if updating() {
					require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
					require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
					return
				}
				want, err := os.ReadFile(golden)
				require.NoError(t, err, "run go test -update")
				require.Equal(t, string(want), got)
				var d struct{ Argv []string }
				require.NoError(t, json.Unmarshal([]byte(r.stdout), &d))
				require.True(t, promptIsNotAFlag(d.Argv), "the prompt must not be taken for a flag: %q", d.Argv)
			})
		}
	}
}

// promptIsNotAFlag reports whether a prompt starting with "-" is protected:
// after a "--", or glued to its flag with "=".
func promptIsNotAFlag(argv []string) bool {
	for i, a := range argv {
		if a == "-starts with a dash" {
			return i > 0 && argv[i-1] == "--"
		}
		if strings.HasSuffix(a, "=-starts with a dash") {
			return true
		}
	}
	return false
}

func TestParseCommand(t *testing.T) {
	isolate(t)
	wd, _ := os.Getwd()
	_ = wd
	root := repoRoot(t)
	ok := filepath.Join(root, "testdata", "claude", "tool.jsonl")
	r := invoke(t, "", "parse", "--agent", "claude-code", ok)
	require.Equal(t, 0, r.code, r.stderr)
	adaptertest.CheckStream(t, []byte(r.stdout))

	// From stdin, cut short: no terminal event -> error, exit 1, nothing lost.
	data, err := os.ReadFile(ok)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	r = invoke(t, strings.Join(lines[:3], "")+"garbage line\n", "parse", "--agent", "claude", "--raw")
	require.Equal(t, exitAgentFailed, r.code)
	adaptertest.CheckStream(t, []byte(r.stdout))
	require.Contains(t, r.stdout, `"code":"no_terminal_event"`)
	require.Contains(t, r.stdout, `"unparsed_lines":1`)
	require.Contains(t, r.stdout, `"line":"garbage line"`)
	require.Regexp(t, regexp.MustCompile(`"status":"error"`), r.stdout)
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join(pkgDir, "..", ".."))
	require.NoError(t, err)
	return dir
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

func TestRunExitStatuses(t *testing.T) {
	isolate(t)
	cases := []struct {
		fake string
		args []string
		code int
	}{
		{"result-then-linger", []string{"--linger", "100ms"}, exitOK},
		{"exit-nonzero-with-stderr", nil, exitAgentFailed},
		{"hang-silent", []string{"--idle-timeout", "200ms", "--kill-grace", "100ms"}, exitTimeout},
		{"hang-after-output", []string{"--timeout", "300ms", "--kill-grace", "100ms"}, exitTimeout},
	}
	for _, tc := range cases {
		t.Run(tc.fake, func(t *testing.T) {
			r := runFake(t, tc.fake, append(tc.args, "--no-log")...)
			require.Equal(t, tc.code, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
			adaptertest.CheckStream(t, []byte(r.stdout))
		})
	}
	r := invoke(t, "", "run", "--agent", "claude", "--binary", "/nonexistent/claude", "-p", "x", "--no-log")
	require.Equal(t, exitNotFound, r.code)
	require.Contains(t, r.stderr, "/nonexistent/claude")
	require.Contains(t, r.stdout, `"code":"not_installed"`)
}

func TestRunFormatsAndSessionLog(t *testing.T) {
	home := isolate(t)
	out := filepath.Join(home, "tee.ndjson")
	r := runFake(t, "result-then-linger", "--linger", "100ms", "-f", "text", "-o", out)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "▶ claude")
	require.Contains(t, r.stdout, "— success")
	require.NotContains(t, r.stdout, "\x1b[", "no color when stdout is not a terminal")
	tee, err := os.ReadFile(out)
	require.NoError(t, err)
	adaptertest.CheckStream(t, tee)

	dir := filepath.Join(home, ".local", "share", "harness", "sessions")
	st, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	files, err := filepath.Glob(filepath.Join(dir, "run_*"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 3)
	for _, f := range files {
		st, err := os.Stat(f)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), f)
	}
	logged, err := filepath.Glob(filepath.Join(dir, "run_*.ndjson"))
	require.NoError(t, err)
	require.Len(t, logged, 1)
	data, err := os.ReadFile(logged[0])
	require.NoError(t, err)
	require.Equal(t, string(tee), string(data), "the session log holds the very stream")

	r = invoke(t, "", "sessions", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "success")
	run := strings.TrimSuffix(filepath.Base(logged[0]), ".ndjson")
	r = invoke(t, "", "sessions", "replay", run)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, string(data), r.stdout)
	r = invoke(t, "", "sessions", "reparse", run)
	require.Equal(t, 0, r.code, r.stderr)
	adaptertest.CheckStream(t, []byte(r.stdout))

	r = runFake(t, "result-then-linger", "--linger", "100ms", "-f", "json", "--no-log")
	require.Equal(t, 0, r.code, r.stderr)
	var doc struct {
		Events []json.RawMessage
		Result event.Result
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	require.Equal(t, event.ResultSuccess, doc.Result.Status)
	require.NotEmpty(t, doc.Events)
}

func TestExtraArgsGoBeforeThePrompt(t *testing.T) {
	isolate(t)
	r := invoke(t, "", "run", "--agent", "claude", "--binary", "/bin/true", "-p", "hi", "--dry-run", "--", "--add-dir", "x")
	require.Equal(t, 0, r.code, r.stderr)
	var d struct{ Argv []string }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d))
	n := len(d.Argv)
	require.Equal(t, []string{"--add-dir", "x", "--", "hi"}, d.Argv[n-4:])
}

// signalOnLine is a stdout that runs fire once a line containing marker
// has been written.
type signalOnLine struct {
	bytes.Buffer
	marker string
	fire   func()
	fired  bool
}

func (w *signalOnLine) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	if !w.fired && bytes.Contains(p, []byte(w.marker)) {
		w.fired = true
		w.fire()
	}
	return n, err
}

func TestRunInterruptedBySIGINT(t *testing.T) {
	isolate(t)
	argv, _ := fakeagent.Command("interrupt")
	out := &signalOnLine{marker: `"type":"tool_start"`, fire: func() { syscall.Kill(os.Getpid(), syscall.SIGINT) }}
	var errb bytes.Buffer
	code := run([]string{"run", "--agent", "claude", "--binary", argv[0], "--env", fakeagent.EnvVar + "=interrupt",
		"-p", "go", "--no-log", "--kill-grace", "2s"}, strings.NewReader(""), out, &errb)
	require.Equal(t, exitInterrupted, code, "stderr: %s", errb.String())
	require.Contains(t, errb.String(), "tool still running at interrupt: Bash (call="+fakeagent.ToolCallID+", kind=shell, elapsed=")
	require.Contains(t, errb.String(), "[command=npm install --legacy-peer-deps]")
	adaptertest.CheckStream(t, out.Bytes())
	require.Contains(t, out.String(), `"code":"interrupted"`)
	require.Contains(t, out.String(), `"status":"cancelled"`)
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

func TestPromptFromStdinAndFile(t *testing.T) {
	home := isolate(t)
	r := invoke(t, "task from a pipe", "run", "--agent", "codex", "--binary", "/bin/true", "--dry-run")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"task from a pipe"`)
	file := filepath.Join(home, "task.md")
	require.NoError(t, os.WriteFile(file, []byte("task from a file"), 0o644))
	r = invoke(t, "", "run", "--agent", "codex", "--binary", "/bin/true", "--prompt-file", file, "--dry-run")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"task from a file"`)
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

// TestMisspelledFlagIsNotTheAgents: only what follows "--" reaches the
// agent; a misspelled harness flag before it is a usage error naming it,
// never an agent argument (which would also drop the setting it meant).
func TestMisspelledFlagIsNotTheAgents(t *testing.T) {
	isolate(t)
	for name, tc := range map[string]struct {
		args []string
		want []string
	}{
		"long":       {[]string{"--permisions", "read-only"}, []string{"--permisions", `"--permissions"`}},
		"long-value": {[]string{"--permisions=read-only"}, []string{"--permisions", `"--permissions"`}},
		"short":      {[]string{"-Z"}, []string{"-Z"}},
		"bare-word":  {[]string{"read-only"}, []string{`"read-only"`, "--"}},
	} {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"run", "-a", "claude", "-p", "x", "--binary", "/bin/true"}, tc.args...)
			r := invoke(t, "", append(args, "--dry-run")...)
			require.Equal(t, exitUsage, r.code, "stdout: %s", r.stdout)
			require.Empty(t, r.stdout, "nothing runs")
			for _, w := range tc.want {
				require.Contains(t, r.stderr, w)
			}
		})
	}
	r := invoke(t, "", "run", "-a", "claude", "-p", "x", "--binary", "/bin/true", "--dry-run", "--", "--permisions", "read-only")
	require.Equal(t, 0, r.code, r.stderr)
	var d struct{ Argv []string }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d))
	require.Contains(t, d.Argv, "--permisions", "after -- it is the agent's")
}
