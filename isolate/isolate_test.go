package isolate

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheck(t *testing.T) {
	require.NoError(t, Check(""))
	require.NoError(t, Check(None))
	require.NoError(t, Check(Bwrap), "make test installs bubblewrap")
	require.NoError(t, Check(Podman), "make test installs podman")
	require.ErrorContains(t, Check("lxc"), `isolate "lxc": want none, bwrap, podman or docker`)
}

func TestPrefix(t *testing.T) {
	dir := t.TempDir()
	s := Spec{Chdir: "/app", Binds: []Bind{{Host: dir, Inner: "/app"}, {Host: dir, Inner: "/logs/agent"}}}
	args, err := s.Prefix()
	require.NoError(t, err)
	require.Equal(t, "--", args[len(args)-1])
	for _, f := range []string{"--unshare-pid", "--die-with-parent", "--unshare-net", "--unshare-user", "--cap-drop"} {
		require.Contains(t, args, f)
	}
	s.Network = true
	args, _ = s.Prefix()
	require.NotContains(t, args, "--unshare-net")

	// A mount point the read-only host cannot have made is refused.
	_, err = Spec{Binds: []Bind{{Host: dir, Inner: "/usr/no-such-dir/x"}}}.Prefix()
	require.ErrorContains(t, err, "is not a directory on the host")
	_, err = Spec{Binds: []Bind{{Host: dir, Inner: "rel"}}}.Prefix()
	require.ErrorContains(t, err, "want an absolute path")
}

// The sandbox sees the host read-only and its binds writable.
func TestHides(t *testing.T) {
	s := Spec{Binds: []Bind{
		{Host: "/var/run-1/tmp", Inner: "/tmp"},
		{Host: "/var/run-1/home", Inner: "/root"},
		{Host: "/tmp/model-home", Inner: "/tmp/model-home"},
		{Host: "/var/run-1/app", Inner: "/app"},
		{Host: "/var/run-1/logs", Inner: "/logs/agent"},
	}}
	for p, hidden := range map[string]bool{
		"/tmp/agents/bin/claude":      true,  // the sandbox's own /tmp
		"/root/.local/bin/claude":     true,  // the run's own HOME
		"/tmp/model-home/.claude":     false, // bound at its own path
		"/app/x":                      true,
		"/logs/agent/x":               true,
		"/logs/verifier":              false, // the host's /logs is seen
		"/usr/local/bin/claude":       false,
		"/proc/1":                     true,
		"/rootless/bin":               false, // not below /root
		"/tmp/model-home/../agents/x": true,
	} {
		require.Equal(t, hidden, s.Hides(p), p)
	}
}

func TestSandboxIsReadOnlyButItsBinds(t *testing.T) {
	ws := t.TempDir()
	args, err := Spec{Chdir: "/app", Binds: []Bind{{Host: ws, Inner: "/app"}, {Host: t.TempDir(), Inner: "/tmp"}}}.Prefix()
	require.NoError(t, err)
	target := filepath.Join(t.TempDir(), "host-file")
	script := "echo x > " + target + " 2>/dev/null && echo wrote-host; echo y > /usr/harness-isolate-test 2>/dev/null && echo wrote-usr; pwd > here.txt"
	out, err := exec.Command(args[0], slices.Concat(args[1:], []string{"sh", "-c", script})...).CombinedOutput()
	require.NoError(t, err, string(out))
	require.NotContains(t, string(out), "wrote")
	here, err := os.ReadFile(filepath.Join(ws, "here.txt"))
	require.NoError(t, err)
	require.Equal(t, "/app", strings.TrimSpace(string(here)))
	_, err = os.Stat(target)
	require.True(t, os.IsNotExist(err))
}

// The sandbox's temporary directory is its own /tmp, whatever the host's
// TMPDIR: one outside /tmp is read-only in the sandbox, where an agent
// writing its temporary files failed (EROFS).
func TestSandboxTemporaryDirectoryIsItsTmp(t *testing.T) {
	hostTmp, err := os.MkdirTemp("/var/tmp", "harness-isolate-tmpdir-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(hostTmp) })
	ws, tmp := t.TempDir(), t.TempDir()
	args, err := Spec{Chdir: "/app", Binds: []Bind{{Host: ws, Inner: "/app"}, {Host: tmp, Inner: "/tmp"}}}.Prefix()
	require.NoError(t, err)
	cmd := exec.Command(args[0], slices.Concat(args[1:], []string{"sh", "-c", `echo "$TMPDIR $TMP $TEMP" > env.txt && mktemp > made.txt`})...)
	cmd.Env = append(os.Environ(), "TMPDIR="+hostTmp, "TMP="+hostTmp, "TEMP="+hostTmp)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	env, _ := os.ReadFile(filepath.Join(ws, "env.txt"))
	require.Equal(t, "/tmp /tmp /tmp\n", string(env))
	made, _ := os.ReadFile(filepath.Join(ws, "made.txt"))
	require.FileExists(t, filepath.Join(tmp, filepath.Base(strings.TrimSpace(string(made)))), "made in the sandbox's /tmp")
}

// A hidden host directory is empty in the sandbox wherever it lies (here
// under /var/tmp: the sandbox's own /tmp hides the host's anyway), a bind
// below it still shows, and a hidden path that does not exist is no
// error.
func TestSandboxHidesDirectories(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "harness-isolate-hide-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	task := filepath.Join(base, "task")
	require.NoError(t, os.MkdirAll(filepath.Join(task, "solution"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(task, "solution", "solve.sh"), []byte("secret\n"), 0o644))
	shown := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(shown, "f"), []byte("shown\n"), 0o644))
	ws := t.TempDir()
	s := Spec{Chdir: "/app", Hide: []string{task, filepath.Join(base, "no-such-dir")},
		Binds: []Bind{{Host: ws, Inner: "/app"}, {Host: shown, Inner: filepath.Join(task, "kept")}}}
	args, err := s.Prefix()
	require.NoError(t, err)
	script := "cat " + filepath.Join(task, "solution", "solve.sh") + " && echo SAW; ls -A " + task + " > ls.txt; cat " + filepath.Join(task, "kept", "f") + " > kept.txt"
	out, err := exec.Command(args[0], slices.Concat(args[1:], []string{"sh", "-c", script})...).CombinedOutput()
	require.NoError(t, err, string(out))
	require.NotContains(t, string(out), "SAW")
	ls, _ := os.ReadFile(filepath.Join(ws, "ls.txt"))
	require.Equal(t, "kept\n", string(ls), "the hidden directory shows only the bind below it")
	kept, _ := os.ReadFile(filepath.Join(ws, "kept.txt"))
	require.Equal(t, "shown\n", string(kept))
	require.True(t, s.Hides(filepath.Join(task, "solution", "solve.sh")))
	require.False(t, s.Hides(base))

	// Below a bind of another directory it is hidden already; below a
	// bind at its own path, which would show it, it is refused.
	require.NoError(t, os.Mkdir(filepath.Join(ws, "x"), 0o755))
	args, err = Spec{Hide: []string{filepath.Join(ws, "x")}, Binds: []Bind{{Host: shown, Inner: ws}}}.Prefix()
	require.NoError(t, err)
	require.NotContains(t, strings.Join(args, " "), "--tmpfs "+filepath.Join(ws, "x"))
	_, err = Spec{Hide: []string{task}, Binds: []Bind{{Host: base, Inner: base}}}.Prefix()
	require.ErrorContains(t, err, "cannot be hidden below the bind of "+base+" at its own path")
}

// The sandbox has no capability, even when harness runs as root: bwrap
// left root's every capability (CapEff 000001fffeffffff), and the
// command remounted a read-only host directory writable and changed a
// host file, mounted a tmpfs, and unmounted a hidden directory's tmpfs.
func TestSandboxHasNoCapabilities(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "harness-isolate-caps-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	host, bound, hidden := filepath.Join(base, "host"), filepath.Join(base, "bound"), filepath.Join(base, "hidden")
	for _, d := range []string{host, bound, hidden} {
		require.NoError(t, os.Mkdir(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "f"), []byte("host\n"), 0o644))
	}
	ws := t.TempDir()
	args, err := Spec{Chdir: "/app", Hide: []string{hidden}, Binds: []Bind{
		{Host: ws, Inner: "/app"}, {Host: t.TempDir(), Inner: "/tmp"}, {Host: bound, Inner: "/ro", ReadOnly: true},
	}}.Prefix()
	require.NoError(t, err)
	script := strings.NewReplacer("HOST", host, "HIDDEN", hidden).Replace(`
grep CapEff /proc/self/status > caps.txt
mount -o remount,bind,rw HOST && echo REMOUNTED
echo changed > HOST/f && echo WROTE
mount -o remount,bind,rw /ro && echo REMOUNTED
echo changed > /ro/f && echo WROTE
mount -t tmpfs x HOST && echo MOUNTED
umount HIDDEN && echo UNMOUNTED
cat HIDDEN/f && echo SAW
echo done > done.txt`)
	out, _ := exec.Command(args[0], slices.Concat(args[1:], []string{"sh", "-c", script})...).CombinedOutput()
	for _, w := range []string{"REMOUNTED", "WROTE", "MOUNTED", "SAW"} {
		require.NotContains(t, string(out), w)
	}
	require.FileExists(t, filepath.Join(ws, "done.txt"), string(out))
	caps, err := os.ReadFile(filepath.Join(ws, "caps.txt"))
	require.NoError(t, err)
	require.Equal(t, "CapEff:\t0000000000000000\n", string(caps))
	for _, d := range []string{host, bound} {
		b, _ := os.ReadFile(filepath.Join(d, "f"))
		require.Equal(t, "host\n", string(b), d)
	}
}

// A hidden file is empty in the sandbox (/dev/null over it), and one
// below a hidden directory needs nothing of its own.
func TestSandboxHidesFiles(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "harness-isolate-hidefile-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	events, res := filepath.Join(base, "events.ndjson"), filepath.Join(base, "res")
	require.NoError(t, os.WriteFile(events, []byte("SECRET\n"), 0o600))
	require.NoError(t, os.Mkdir(res, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(res, "row.json"), []byte("SECRET\n"), 0o600))
	ws := t.TempDir()
	s := Spec{Chdir: "/app", Hide: []string{events, res, filepath.Join(res, "row.json"), res}, Binds: []Bind{{Host: ws, Inner: "/app"}}}
	args, err := s.Prefix()
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(strings.Join(args, " "), "--tmpfs "+res), "once, and nothing below it")
	require.NotContains(t, args, filepath.Join(res, "row.json"))
	script := "cat " + events + " > seen.txt; ls -A " + res + " >> seen.txt; echo ok >> seen.txt"
	out, err := exec.Command(args[0], slices.Concat(args[1:], []string{"sh", "-c", script})...).CombinedOutput()
	require.NoError(t, err, string(out))
	seen, _ := os.ReadFile(filepath.Join(ws, "seen.txt"))
	require.Equal(t, "ok\n", string(seen))
	require.True(t, s.Hides(events))
	b, _ := os.ReadFile(events)
	require.Equal(t, "SECRET\n", string(b), "the host's file is untouched")
}
