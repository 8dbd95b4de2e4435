//go:build linux

package harness_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
)

// cwdLockedEnv holds, in the test binary re-run as another user, the
// cwd TestCwdNotEnterable gives Prepare.
const cwdLockedEnv = "HARNESS_TEST_CWD_LOCKED"

// TestCwdNotEnterable: a cwd that harness's user cannot enter (no search
// permission) is refused by Prepare, a TaskError before anything starts,
// as a missing one is; it failed the agent's spawn after the session log
// and session_start were written. Root enters any directory, so as root
// the test runs itself again as another uid on a directory of root's.
func TestCwdNotEnterable(t *testing.T) {
	locked := os.Getenv(cwdLockedEnv)
	if locked == "" {
		dir := t.TempDir()
		locked = filepath.Join(dir, "locked")
		require.NoError(t, os.Mkdir(locked, 0o700))
		require.NoError(t, os.Chmod(locked, 0))
		t.Cleanup(func() { os.Chmod(locked, 0o700) })
		if os.Geteuid() == 0 {
			asNobody(t, dir)
			return
		}
	}
	_, err := harness.Prepare(harness.Task{Agent: "nop", Prompt: "hi", Cwd: locked})
	var te *harness.TaskError
	require.ErrorAs(t, err, &te)
	require.ErrorIs(t, err, fs.ErrPermission)
	require.EqualError(t, err, `cwd "`+locked+`" cannot be entered: permission denied`)
}

// asNobody runs TestCwdNotEnterable in the test binary as uid 65534 on
// dir/locked, and fails when it does.
func asNobody(t *testing.T, dir string) {
	t.Helper()
	exe, err := os.Open("/proc/self/exe")
	require.NoError(t, err)
	defer exe.Close()
	d, err := os.Open(dir)
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, os.Chmod(dir, 0o755))
	// Through descriptors: the test binary and dir lie in directories
	// (0700) the other user cannot enter, and a /proc/self/fd link is
	// not walked through them.
	cmd := exec.Command("/proc/self/fd/3", "-test.run=^TestCwdNotEnterable$", "-test.count=1", "-test.v")
	cmd.ExtraFiles = []*os.File{exe, d}
	cmd.Env = append(os.Environ(), cwdLockedEnv+"=/proc/self/fd/4/locked")
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: TestCwdNotEnterable", "%s", out)
}
