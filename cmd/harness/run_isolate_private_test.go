package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/execfile"
	"github.com/agentharness/harness/internal/fakeagent"
)

// harness run --isolate bwrap removes its private HOME and /tmp though
// the agent left read-only directories in them (Go's module cache is
// 0555), and removes one that a harness killed with SIGKILL left (its
// lock free, a minute old). Before, both stayed in the host's TMPDIR.
// The harness runs as nobody when the tests run as root, whom a
// directory's mode does not stop.
func TestRunIsolatedRemovesPrivateDir(t *testing.T) {
	isolate(t)
	base := varTmp(t)
	require.NoError(t, os.Chmod(base, 0o755))
	exe, err := os.Executable()
	require.NoError(t, err)
	data, err := os.ReadFile(exe)
	require.NoError(t, err)
	bin := filepath.Join(base, "harness.test") // the build's own directory is root's alone
	require.NoError(t, execfile.Write(bin, data, 0o755))
	uid, gid := os.Getuid(), os.Getgid()
	var cred *syscall.Credential
	if uid == 0 {
		uid, gid = 65534, 65534
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	home, tmp, ws := filepath.Join(base, "home"), filepath.Join(base, "tmp"), filepath.Join(base, "ws")
	stale := filepath.Join(tmp, sandboxPrefix+"stale")
	require.NoError(t, os.MkdirAll(filepath.Join(stale, "home", "go", "pkg", "mod"), 0o755))
	for _, d := range []string{home, ws} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	require.NoError(t, execfile.Write(filepath.Join(ws, "gomod.sh"), []byte(`#!/bin/bash
set -e
mkdir -p "$HOME/go/pkg/mod/example.com/x@v1.0.0" /tmp/ro/sub
echo x > "$HOME/go/pkg/mod/example.com/x@v1.0.0/go.mod"
chmod -R a-w "$HOME/go/pkg/mod/example.com" /tmp/ro
echo ok > done.txt
`), 0o755))
	out, err := exec.Command("chown", "-R", strconv.Itoa(uid)+":"+strconv.Itoa(gid), home, tmp, ws).CombinedOutput()
	require.NoError(t, err, string(out))
	require.NoError(t, os.Chmod(filepath.Join(stale, "home", "go", "pkg", "mod"), 0o555))
	old := time.Now().Add(-2 * time.Minute)
	require.NoError(t, os.Chtimes(stale, old, old))

	argv, env := fakeagent.Command("harness-main", "run", "--agent", "oracle", "-p", "run", "--no-log",
		"--cwd", ws, "--isolate", "bwrap", "--", "./gomod.sh")
	cmd := exec.Command(bin, argv[1:]...)
	cmd.Dir = ws
	cmd.Env = append(env, "HOME="+home, "TMPDIR="+tmp, "XDG_CONFIG_HOME="+home+"/.config",
		"XDG_DATA_HOME="+home+"/.local/share", "XDG_CACHE_HOME="+home+"/.cache")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	got, err := cmd.CombinedOutput()
	require.NoError(t, err, string(got))
	_, err = os.Stat(filepath.Join(ws, "done.txt"))
	require.NoError(t, err, "the agent did not run: %s", got)
	left, err := filepath.Glob(filepath.Join(tmp, sandboxPrefix+"*"))
	require.NoError(t, err)
	require.Empty(t, left, "a private HOME and /tmp left behind")
}
