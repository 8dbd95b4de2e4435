package fakeagent

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	MaybeRun()
	os.Exit(m.Run())
}

func TestRegisterDuplicatePanics(t *testing.T) {
	t.Parallel()
	require.Panics(t, func() { Register("sleeper", sleeper) })
	require.Panics(t, func() { Register("", sleeper) })
	require.Contains(t, Names(), "hang-silent")
}

func TestCommandRunsTheFake(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"exit-nonzero-with-stderr", []string{"3"}, 3, `"subtype":"init"`, "Invalid API key"},
		{"exit-0-without-terminal-event", nil, 0, `"text":"partial answer"`, ""},
		{"no-such-fake", nil, 2, "", `no fake named "no-such-fake"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			argv, env := Command(c.name, c.args...)
			require.Contains(t, env, EnvVar+"="+c.name)
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = env
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			require.Equal(t, c.code, cmd.ProcessState.ExitCode(), "err %v, stderr %s", err, errb.String())
			require.Contains(t, out.String(), c.stdout)
			require.Contains(t, errb.String(), c.stderr)
			for l := range strings.Lines(out.String()) {
				require.Contains(t, l, `"seq":`, "every line is numbered")
			}
		})
	}
}
