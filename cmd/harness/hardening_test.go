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
	home := isolateWith(t, "[agents.claude.env]\nCFG_THING = \"cfg-value-abc123\"\n")
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
	for _, agent := range capturedAgents() {
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
