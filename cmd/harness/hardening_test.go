package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/internal/fakeagent"
)

// The CLI side of issue 14's hardening: secrets, terminals, failed
// writes, prompts.

// sessionFiles returns every file of the sessions directory, by name.
func sessionFiles(t *testing.T, home string) map[string][]byte {
	t.Helper()
	dir := filepath.Join(home, ".local", "share", "harness", "sessions")
	files, err := filepath.Glob(filepath.Join(dir, "run_*"))
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		out[filepath.Base(f)] = data
	}
	return out
}

// TestSessionLogRedactsWhatTheUserHanded: values given with --env and in
// a config env table, whatever their names, and credentials of the known
// shapes never reach the session log — not its events, native lines,
// stderr or summary — and every JSON line stays JSON. The user's own
// stream (stdout, -o) is the agent's, byte for byte.
func TestSessionLogRedactsWhatTheUserHanded(t *testing.T) {
	home := isolate(t)
	toml := "[agents.claude.env]\nCFG_THING = \"cfg-value-abc123\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(home, "harness.toml"), []byte(toml), 0o644))
	secrets := []string{"cli-value-xyz789", "cfg-value-abc123", "dXNlcjpodW50ZXIyaHVudGVy", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"sk_live_4eC39HqLyjWDarjtT1zdp7dc", "glpat-xYz0123456789abcdefGH", "urlpassw0rd"}
	r := runFake(t, "echo-env", "--env", "PLAIN_NAME=cli-value-xyz789", "--env", fakeagent.EchoVars+"=PLAIN_NAME,CFG_THING",
		"--linger", "100ms", "-o", filepath.Join(home, "out.ndjson"))
	require.Equal(t, 0, r.code, r.stderr)
	for _, s := range secrets {
		require.Contains(t, r.stdout, s, "the fake printed it, and stdout is the agent's own")
	}
	files := sessionFiles(t, home)
	require.Len(t, files, 4, "events, native, stderr, meta")
	for name, data := range files {
		for _, s := range secrets {
			require.NotContains(t, string(data), s, "%s holds a secret", name)
		}
		switch {
		case strings.HasSuffix(name, ".ndjson"):
			adaptertest.CheckStream(t, data)
		case strings.HasSuffix(name, ".native.jsonl"):
			for l := range strings.Lines(string(data)) {
				require.True(t, json.Valid([]byte(l)), "%s: %s", name, l)
			}
		case strings.HasSuffix(name, ".meta.json"):
			require.True(t, json.Valid(data), "%s", data)
		}
	}
}

// TestOutputFilesArePrivate: -o (of run, parse and sessions export)
// creates its file 0600,
// and a sessions directory others may enter is tightened before a log is
// written there.
func TestOutputFilesArePrivate(t *testing.T) {
	home := isolate(t)
	sessions := filepath.Join(home, ".local", "share", "harness", "sessions")
	require.NoError(t, os.MkdirAll(sessions, 0o755))
	require.NoError(t, os.Chmod(sessions, 0o755))
	out := filepath.Join(home, "out.ndjson")
	r := runFake(t, "result-then-linger", "--linger", "100ms", "-o", out)
	require.Equal(t, 0, r.code, r.stderr)
	st, err := os.Stat(out)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	st, err = os.Stat(sessions)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())

	logged, err := filepath.Glob(filepath.Join(sessions, "run_*.ndjson"))
	require.NoError(t, err)
	require.Len(t, logged, 1)
	export := filepath.Join(home, "export.tar.gz")
	r = invoke(t, "", "sessions", "export", strings.TrimSuffix(filepath.Base(logged[0]), ".ndjson"), "-o", export)
	require.Equal(t, 0, r.code, r.stderr)
	st, err = os.Stat(export)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "an export holds the logs")

	parsed := filepath.Join(home, "parsed.ndjson")
	r = invoke(t, "", "parse", "-a", "claude", "-o", parsed, filepath.Join(repoRoot(t), "testdata", "claude", "tool.jsonl"))
	require.Equal(t, 0, r.code, r.stderr)
	st, err = os.Stat(parsed)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
}

// TestHarnessSecretsStayWithHarness: the MCP bearer token in harness's
// environment is not the agent's, in a full-access run or a read-only one.
func TestHarnessSecretsStayWithHarness(t *testing.T) {
	isolate(t)
	t.Setenv("HARNESS_MCP_TOKEN", "mcp-token-0123456789abcdef")
	t.Setenv("SOME_OTHER_VAR", "kept-value")
	for _, perm := range []string{"full-access", "read-only"} {
		r := runFake(t, "echo-env", "--env", fakeagent.EchoVars+"=HARNESS_MCP_TOKEN,SOME_OTHER_VAR",
			"--permissions", perm, "--linger", "100ms", "--no-log")
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "HARNESS_MCP_TOKEN unset", perm)
		require.Contains(t, r.stdout, "SOME_OTHER_VAR=kept-value", perm)
		require.NotContains(t, r.stdout, "mcp-token-0123456789abcdef", perm)
	}
}

// TestTextOutputCannotDriveTheTerminal: -f text shows what the agent said
// without the escape sequences it sent (clipboard, title, clear screen,
// carriage return), while NDJSON keeps them, JSON-escaped.
func TestTextOutputCannotDriveTheTerminal(t *testing.T) {
	isolate(t)
	r := runFake(t, "terminal-escapes", "-f", "text", "--linger", "100ms", "--no-log")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "helloworld")
	for _, c := range []string{"\x1b", "\u009b", "\a", "\r", "52;c;", "pwned"} {
		require.NotContains(t, r.stdout, c)
	}

	r = runFake(t, "terminal-escapes", "--linger", "100ms", "--no-log")
	require.Equal(t, 0, r.code, r.stderr)
	adaptertest.CheckStream(t, []byte(r.stdout))
	require.NotContains(t, r.stdout, "\x1b", "NDJSON escapes control characters")
	require.Contains(t, r.stdout, `\u001b]52;c;cm0gLXJmIH4vKg==\u0007`)
	found := false
	for l := range strings.Lines(r.stdout) {
		var ev struct{ Type, Role, Text string }
		require.NoError(t, json.Unmarshal([]byte(l), &ev))
		if ev.Type == "message" && ev.Role == "assistant" {
			require.Equal(t, fakeagent.TerminalAttack, ev.Text, "byte-faithful")
			found = true
		}
	}
	require.True(t, found)
}

// TestInterruptLineCannotDriveTheTerminal: the "tool still running" line
// quotes the agent's command without its escape sequences.
func TestInterruptLineCannotDriveTheTerminal(t *testing.T) {
	isolate(t)
	argv, _ := fakeagent.Command("terminal-escapes-interrupt")
	out := &signalOnLine{marker: `"type":"tool_start"`, fire: func() { syscall.Kill(os.Getpid(), syscall.SIGINT) }}
	var errb bytes.Buffer
	code := run([]string{"run", "--agent", "claude", "--binary", argv[0], "--env", fakeagent.EnvVar + "=terminal-escapes-interrupt",
		"-p", "go", "--no-log", "--kill-grace", "2s"}, strings.NewReader(""), out, &errb)
	require.Equal(t, exitInterrupted, code, "stderr: %s", errb.String())
	require.Contains(t, errb.String(), "tool still running at interrupt: Bash")
	require.Contains(t, errb.String(), "[command=printf 'hello world']")
	for _, c := range []string{"\x1b", "\u009b", "\a", "\r"} {
		require.NotContains(t, errb.String(), c)
	}
}

// TestRunFailsWhenOutputCannotBeWritten: a full disk or a closed stdout,
// or an -o file that cannot be written, is exit 1 with one line, never a
// silent success.
func TestRunFailsWhenOutputCannotBeWritten(t *testing.T) {
	isolate(t)
	argv, _ := fakeagent.Command("result-then-linger")
	closed, w, err := os.Pipe()
	require.NoError(t, err)
	closed.Close()
	w.Close()
	for name, tc := range map[string]struct {
		stdout io.Writer
		args   []string
		want   string
	}{
		"disk-full":    {failingWriter{errors.New("disk full")}, nil, "run: writing the output: disk full"},
		"closed":       {w, nil, "run: writing the output:"},
		"json-full":    {failingWriter{errors.New("disk full")}, []string{"-f", "json"}, "run: writing the output: disk full"},
		"text-full":    {failingWriter{errors.New("disk full")}, []string{"-f", "text"}, "run: writing the output: disk full"},
		"tee-dev-full": {&bytes.Buffer{}, []string{"-o", "/dev/full"}, "run: -o: write /dev/full: no space left on device"},
	} {
		t.Run(name, func(t *testing.T) {
			var errb bytes.Buffer
			args := append([]string{"run", "--agent", "claude", "--binary", argv[0], "--env", fakeagent.EnvVar + "=result-then-linger",
				"-p", "go", "--linger", "100ms", "--kill-grace", "1s", "--no-log"}, tc.args...)
			code := run(args, strings.NewReader(""), tc.stdout, &errb)
			require.Equal(t, exitAgentFailed, code, "stderr: %s", errb.String())
			require.Contains(t, errb.String(), tc.want)
			require.Equal(t, 1, strings.Count(strings.TrimSpace(errb.String()), "\n")+1, "one line: %q", errb.String())
		})
	}
}

// TestLongPromptGoesOnStdin: a prompt one argument cannot hold (128 KiB)
// reaches the agent whole on its stdin; a short one stays an argument.
func TestLongPromptGoesOnStdin(t *testing.T) {
	isolate(t)
	argv, _ := fakeagent.Command("prompt-echo")
	long := strings.Repeat("a long task line\n", 200<<10/17) // ~200 KiB
	for name, tc := range map[string]struct{ stdin, prompt, want string }{
		"long-from-stdin": {long, "", "stdin=" + strconv.Itoa(len(long)) + ":" + fakeagent.PromptSum(long) + " argv=0:" + fakeagent.PromptSum("")},
		"long-flag":       {"", long, "stdin=" + strconv.Itoa(len(long)) + ":" + fakeagent.PromptSum(long) + " argv=0:" + fakeagent.PromptSum("")},
		"short":           {"", "go", "stdin=0:" + fakeagent.PromptSum("") + " argv=2:" + fakeagent.PromptSum("go")},
	} {
		t.Run(name, func(t *testing.T) {
			args := []string{"run", "--agent", "claude", "--binary", argv[0], "--env", fakeagent.EnvVar + "=prompt-echo", "--no-log", "--linger", "100ms"}
			if tc.prompt != "" {
				args = append(args, "-p", tc.prompt)
			}
			r := invoke(t, tc.stdin, args...)
			require.Equal(t, 0, r.code, r.stderr)
			require.Contains(t, r.stdout, `"text":"`+tc.want+`"`)
		})
	}
}

// TestLongPromptPerAgent: which agent gets a long prompt how, and the one
// that cannot take a very long one says so.
func TestLongPromptPerAgent(t *testing.T) {
	home := isolate(t)
	long := strings.Repeat("x", 200<<10)
	for _, agent := range []string{"claude", "codex", "cursor", "opencode", "gemini"} {
		t.Run(agent, func(t *testing.T) {
			r := invoke(t, long, "run", "-a", agent, "--binary", "/bin/true", "--dry-run", "--cwd", home)
			require.Equal(t, 0, r.code, r.stderr)
			var d struct {
				Argv  []string
				Stdin bool
			}
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &d))
			require.True(t, d.Stdin, "the prompt goes on stdin")
			for _, a := range d.Argv {
				require.Less(t, len(a), 1000, "no argument carries the prompt")
			}
			if agent == "codex" {
				require.Equal(t, []string{"--", "-"}, d.Argv[len(d.Argv)-2:], "codex reads the prompt from stdin when it is -")
			}
		})
	}
	huge := strings.Repeat("x", 9<<20)
	r := invoke(t, huge, "run", "-a", "gemini", "--binary", "/bin/true", "--dry-run")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "8 MiB")
}

// TestPromptIsCapped: a prompt over 16 MiB is a usage error, read no
// further than the cap (--prompt-file /dev/zero ends at once).
func TestPromptIsCapped(t *testing.T) {
	isolate(t)
	r := invoke(t, "", "run", "-a", "claude", "--binary", "/bin/true", "--prompt-file", "/dev/zero", "--dry-run")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "over 16 MiB")
	require.Empty(t, r.stdout)
	in := &countingReader{line: []byte(strings.Repeat("y", 1023) + "\n"), n: 32 << 10} // 32 MiB
	var out, errb bytes.Buffer
	code := run([]string{"run", "-a", "claude", "--binary", "/bin/true", "--dry-run"}, in, &out, &errb)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errb.String(), "the prompt from stdin is over 16 MiB")
	require.LessOrEqual(t, in.read, 16<<20+64<<10, "read no further than the cap")
}

// TestCorruptModelCacheFallsBack: a damaged user model cache is a warning
// and the built-in registry, not a failure of every run.
func TestCorruptModelCacheFallsBack(t *testing.T) {
	home := isolate(t)
	cache := filepath.Join(home, ".cache", "harness", "models.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(cache), 0o700))
	require.NoError(t, os.WriteFile(cache, []byte("this is [not toml\x00"), 0o600))
	r := invoke(t, "", "run", "-a", "claude", "-m", "sonnet", "-p", "x", "--binary", "/bin/true", "--dry-run")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "warning")
	require.Contains(t, r.stderr, cache)
	require.Contains(t, r.stderr, "built-in model registry")
	require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, "one line: %q", r.stderr)
	require.Contains(t, r.stdout, "--model=claude-sonnet", "the built-in alias still resolves")
}

// TestParseDirectory: a directory is a usage error with one clear line,
// nothing on stdout.
func TestParseDirectory(t *testing.T) {
	home := isolate(t)
	r := invoke(t, "", "parse", "-a", "claude", home)
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, home+" is a directory")
	require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, "one line: %q", r.stderr)
	require.Empty(t, r.stdout)
}
