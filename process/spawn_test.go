//go:build linux

package process

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentharness/harness/internal/execfile"
	"github.com/agentharness/harness/internal/fakeagent"
)

func init() {
	fakeagent.Register("failed-spawns", failedSpawns)
}

// failed-spawns BIN...: a harness in a fake (a fresh process, not a
// subreaper) that starts each BIN, whose exec fails, and reports whether
// runs got cgroups, whether it was a child subreaper before and after,
// the errors, and a run cgroup it still holds.
func failedSpawns(bins []string) int {
	report := map[string]any{"cgroups": cgroupsUsable(), "before": isSubreaper()}
	var errs []string
	for _, bin := range bins {
		p, err := Start(context.Background(), Options{Argv: []string{bin}})
		if err == nil {
			p.Wait()
		}
		errs = append(errs, fmt.Sprint(err))
	}
	report["after"], report["errors"] = isSubreaper(), errs
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if to, _ := os.Readlink("/proc/self/fd/" + fd.Name()); strings.Contains(to, "/harness-run-") {
			report["held"] = to // a run cgroup not removed
		}
	}
	b, _ := json.Marshal(report)
	fmt.Println(string(b))
	return 0
}

func isSubreaper() bool {
	var v int32
	_ = unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&v)), 0, 0, 0)
	return v != 0
}

// TestFailedExecInCgroup: an agent whose exec fails in a run's cgroup
// (its #! interpreter missing: ENOENT; not executable: ENOEXEC) fails
// once, with its exec's error. It was retried without the cgroup, which
// made the harness a child subreaper for the rest of its life, for
// nothing. In a fresh process: this one is a subreaper already.
func TestFailedExecInCgroup(t *testing.T) {
	t.Parallel()
	if !cgroupsUsable() {
		t.Skip("runs get no cgroup here")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "script")
	require.NoError(t, execfile.Write(script, []byte("#!/nonexistent/interp\n"), 0o755))
	garbage := filepath.Join(dir, "garbage")
	require.NoError(t, execfile.Write(garbage, []byte("\x00\x01\x02garbage"), 0o755))

	argv, env := fakeagent.Command("failed-spawns", script, garbage)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Stderr = env, os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err)
	var got struct {
		Cgroups, Before, After bool
		Errors                 []string
		Held                   string
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	require.True(t, got.Cgroups)
	require.False(t, got.Before)
	require.Equal(t, []string{
		"process: spawn failed: " + script + ": its #! interpreter /nonexistent/interp does not exist: no such file or directory",
		"process: spawn failed: " + garbage + ": exec format error",
	}, got.Errors)
	require.False(t, got.After, "a failed exec made the harness a child subreaper")
	require.Empty(t, got.Held, "the run's cgroup outlived its failed spawn")
}

// TestCgroupRefused: a failed spawn into a run's cgroup is retried without
// it only when the cgroup refused the process, not when the exec failed,
// with errors both can give.
func TestCgroupRefused(t *testing.T) {
	t.Parallel()
	cg := newRunCgroup("refused" + strconv.Itoa(os.Getpid()))
	if cg == nil {
		t.Skip("runs get no cgroup here")
	}
	defer cg.remove()
	failed := func(errno syscall.Errno) error {
		return fmt.Errorf("%w: %w", ErrSpawn, execError("", "/agent", &fs.PathError{Op: "fork/exec", Path: "/agent", Err: errno}))
	}
	for _, errno := range []syscall.Errno{syscall.ENOENT, syscall.EACCES, syscall.ENOEXEC} {
		require.False(t, cgroupRefused(failed(errno), cg), "%v", errno)
	}
	require.False(t, cgroupRefused(fmt.Errorf("%w: %w", ErrSpawn, syscall.EMFILE), cg), "pipes")
	require.NoError(t, unix.Rmdir(cg.dir)) // clone3 into a removed cgroup fails with ENOENT
	require.True(t, cgroupRefused(failed(syscall.ENOENT), cg))
	require.False(t, cgroupRefused(failed(syscall.ENOEXEC), cg), "never the cgroup's")
}

// withMissingLoader copies a dynamically linked system binary into dir,
// its dynamic loader (PT_INTERP) renamed to one that does not exist, of
// the same length; it returns the copy and that loader.
func withMissingLoader(t *testing.T, dir string) (bin, loader string) {
	t.Helper()
	for _, src := range []string{"/bin/true", "/usr/bin/true", "/usr/bin/env"} {
		b, err := os.ReadFile(src)
		if err != nil {
			continue
		}
		f, err := elf.NewFile(bytes.NewReader(b))
		if err != nil {
			continue
		}
		for _, prog := range f.Progs {
			if prog.Type != elf.PT_INTERP || prog.Filesz < 16 {
				continue
			}
			n := int(prog.Filesz) - 1 // without its NUL
			loader = "/nonexistent/" + strings.Repeat("l", n-len("/nonexistent/"))
			copy(b[prog.Off:], loader)
			bin = filepath.Join(dir, "dynamic")
			require.NoError(t, execfile.Write(bin, b, 0o755))
			return bin, loader
		}
	}
	t.Skip("no dynamically linked binary to patch")
	return "", ""
}
