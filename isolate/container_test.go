package isolate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/execfile"
)

// Docker cannot run on these machines: its command lines are checked
// against podman's, verb by verb; where they differ is named here.
func TestDockerArgs(t *testing.T) {
	d, p := &Engine{Name: Docker, Bin: "docker"}, &Engine{Name: Podman, Bin: "podman"}
	c := Container{Name: "harness-run-1", Image: "localhost/harness-task-x:ab", Workdir: "/app", CPUs: 1.5, MemoryMB: 2048,
		Binds: []Bind{{Host: "/h/app", Inner: "/app"}, {Host: "/h/sol", Inner: "/solution", ReadOnly: true}}}
	require.Equal(t, []string{"docker", "run", "--rm", "-i", "--init", "--name", "harness-run-1", "--label", "harness.run=harness-run-1",
		"--log-driver", "none", "--cpus", "1.5", "--memory", "2048m", "--network", "none",
		"-v", "/h/app:/app", "-v", "/h/sol:/solution:ro", "-w", "/app",
		"--entrypoint", "/bin/sh", "localhost/harness-task-x:ab", "-c", "echo ready; cat >/dev/null"}, d.RunArgs(c))
	require.Equal(t, p.RunArgs(c)[1:], d.RunArgs(c)[1:], "run: the same verbs")
	c.Network, c.Lifetime = true, time.Minute
	require.Contains(t, strings.Join(d.RunArgs(c), " "), "--network host")
	require.Contains(t, d.RunArgs(c)[len(d.RunArgs(c))-1], "sleep 61")

	require.Equal(t, []string{"docker", "exec", "-i", "-w", "/app", "-e", "KEY", "-e", "PATH=/bin", "harness-run-1"},
		d.ExecArgs("harness-run-1", "/app", []string{"KEY", "PATH=/bin"}))
	require.Equal(t, []string{"docker", "exec", "-i", "--user", "nobody", "-w", "/app", "harness-run-1"},
		d.ExecAsArgs("harness-run-1", "/app", "nobody", nil))
	// Storage and GPUs: the same flag for storage; GPUs by docker's
	// --gpus, by podman's CDI device.
	c.StorageMB, c.GPUs = 10240, 2
	require.Contains(t, strings.Join(d.RunArgs(c), " "), "--storage-opt size=10240m --gpus 2 ")
	require.Contains(t, strings.Join(p.RunArgs(c), " "), "--storage-opt size=10240m --device nvidia.com/gpu=all ")
	require.Equal(t, []string{"docker", "build", "--quiet", "--label", "harness.run=image", "-t", "img", "-f", "/ctx/Dockerfile", "/ctx"}, d.BuildArgs("img", "/ctx"))
	require.Equal(t, []string{"docker", "cp", "a", "b"}, d.CopyArgs("a", "b"))
	require.Equal(t, []string{"docker", "create", "--name", "n", "--label", "harness.run=n", "img"}, d.CreateArgs("n", "img"))
	// Where they differ: docker has no 'image exists' and no rm -t/--ignore.
	require.Equal(t, []string{"docker", "image", "inspect", "--format", "{{.Id}}", "img"}, d.ImageExistsArgs("img"))
	require.Equal(t, []string{"podman", "image", "exists", "img"}, p.ImageExistsArgs("img"))
	require.Equal(t, []string{"docker", "rm", "-f", "n"}, d.RemoveArgs("n"))
	require.Equal(t, []string{"podman", "rm", "-f", "-t", "0", "--ignore", "n"}, p.RemoveArgs("n"))
	require.Equal(t, []string{"docker", "container", "inspect", "--format", "{{.Id}}", "n"}, d.ExistsArgs("n"))
	require.Equal(t, []string{"podman", "container", "exists", "n"}, p.ExistsArgs("n"))
}

// The container ends, and is removed, when the process holding its
// stdin dies: here the engine's client itself is SIGKILLed.
func TestContainerEndsWithItsHolder(t *testing.T) {
	e, err := ContainerEngine(Podman)
	require.NoError(t, err)
	name := "harness-test-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	r, err := e.Start(t.Context(), Container{Name: name, Image: baseImage}, os.Environ())
	require.NoError(t, err)
	require.Contains(t, listOurs(t, e), name)
	require.NoError(t, r.cmd.Process.Kill())
	<-r.done
	// The client is gone; conmon closes the container's stdin and --rm
	// removes it. Wait for that without a sleep: podman wait returns
	// once it has exited (or at once when it is already gone).
	Run(t.Context(), []string{e.Bin, "wait", name})
	require.Eventually(t, func() bool { return !strings.Contains(listOurs(t, e), name) }, time.Minute, 50*time.Millisecond)
	require.NoError(t, r.Stop(), "Stop after the fact is harmless")
}

// baseImage is the Makefile's base-image (make base-image builds it).
const baseImage = "localhost/harness-base:bookworm-2"

func listOurs(t *testing.T, e *Engine) string {
	out, err := Run(t.Context(), []string{e.Bin, "ps", "-a", "--filter", "label=" + Label, "--format", "{{.Names}}"})
	require.NoError(t, err)
	return string(out)
}

// A removal that fails is reported with the engine's own words, even when
// the engine then fails to say whether the container exists (old: taken
// for gone, the removal's error dropped).
func TestStopKeepsRemovalError(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "podman")
	require.NoError(t, os.WriteFile(fake, []byte(`#!/bin/sh
case "$1" in
run) echo ready; exec cat >/dev/null ;;
rm) echo "Error: cannot remove container: boom-rm" >&2; exit 2 ;;
container) echo "Error: engine broken" >&2; exit 125 ;;
esac
`), 0o755))
	stopTimeout = 300 * time.Millisecond
	t.Cleanup(func() { stopTimeout = time.Minute })
	e := &Engine{Name: Podman, Bin: fake}
	r, err := e.Start(t.Context(), Container{Name: "harness-test-stop", Image: "img"}, os.Environ())
	require.NoError(t, err)
	err = r.Stop()
	require.ErrorContains(t, err, "container harness-test-stop is still there: podman rm: Error: cannot remove container: boom-rm")
}

// Task images accumulate, one per content hash: PruneImages removes
// those not kept, and only harness's of the prefix.
func TestPruneImages(t *testing.T) {
	e, err := ContainerEngine(Podman)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM "+baseImage+"\n"), 0o644))
	prefix := TaskImages + "prunetest"
	old, cur := prefix+":old", prefix+":current"
	for _, tag := range []string{old, cur} {
		_, err := Run(t.Context(), e.BuildArgs(tag, dir))
		require.NoError(t, err)
	}
	removed, err := PruneImages(t.Context(), e, prefix, []string{cur})
	require.NoError(t, err)
	require.Equal(t, []string{old}, removed)
	_, err = Run(t.Context(), e.ImageExistsArgs(old))
	require.Error(t, err, "the old image is gone")
	_, err = Run(t.Context(), e.ImageExistsArgs(cur))
	require.NoError(t, err, "the kept one is there")
	removed, err = PruneImages(t.Context(), e, prefix, nil)
	require.NoError(t, err)
	require.Equal(t, []string{cur}, removed)
	_, err = Run(t.Context(), e.ImageExistsArgs(baseImage))
	require.NoError(t, err, "an image of another name is left alone")
}

func TestQualifiedImage(t *testing.T) {
	for in, want := range map[string]string{
		"alexgshaw/chess-best-move:20251031": "docker.io/alexgshaw/chess-best-move:20251031",
		"ubuntu:24.04":                       "docker.io/library/ubuntu:24.04",
		"localhost/harness-base:bookworm-2":  "localhost/harness-base:bookworm-2",
		"ghcr.io/o/i:1":                      "ghcr.io/o/i:1",
		"registry:5000/i":                    "registry:5000/i",
	} {
		require.Equal(t, want, QualifiedImage(in), in)
	}
}

// A cancelled engine command is asked to stop, not SIGKILLed: SIGINT to
// the client, or SIGTERM to a build step's runtime when there is one (a
// fake engine here: bash names the step's process as podman does).
func TestRunInterrupts(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ script, want string }{
		"client": {`trap 'echo engine INT >>"$1"; exit 3' INT
trap 'echo engine TERM >>"$1"; exit 3' TERM
echo ready >"$2"
while :; do sleep 0.05; done`, "engine INT\n"},
		"build-step": {`trap 'echo engine INT >>"$1"; exit 3' INT
trap 'echo engine TERM >>"$1"; exit 3' TERM
(exec -a buildah-oci-runtime bash -c 'trap "echo step TERM >>$1; exit 1" TERM; echo ready >"$2"; while :; do sleep 0.05; done' step "$1" "$2") &
wait $!
exit 1`, "step TERM\n"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			engine, log, ready := filepath.Join(dir, "engine"), filepath.Join(dir, "log"), filepath.Join(dir, "ready")
			require.NoError(t, execfile.Write(engine, []byte("#!/bin/bash\n"+tc.script+"\n"), 0o755))
			require.NoError(t, syscall.Mkfifo(ready, 0o600))
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { _, err := Run(ctx, []string{engine, log, ready}); done <- err }()
			line, err := os.ReadFile(ready) // until the fake closes it
			require.NoError(t, err)
			require.Equal(t, "ready\n", string(line))
			cancel()
			select {
			case err = <-done:
			case <-time.After(8 * time.Second):
				t.Fatal("Run did not return once its engine ended")
			}
			require.Error(t, err)
			got, _ := os.ReadFile(log)
			require.Equal(t, tc.want, string(got))
		})
	}
}

// A podman build cancelled in a RUN step leaves nothing behind: not the
// step's processes, not its working container (buildah's, which bench
// prune cannot find), not its $TMPDIR/buildah* directory. Before, the
// SIGKILL left all three.
func TestBuildCancelledLeavesNothing(t *testing.T) {
	e, err := ContainerEngine(Podman)
	require.NoError(t, err)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// A base of our own name: the build's working container is named
	// after it, so another build's is never taken for this one's.
	base := "localhost/harness-test-cancel-" + strconv.Itoa(os.Getpid()) + ":1"
	_, err = Run(t.Context(), []string{e.Bin, "tag", baseImage, base})
	require.NoError(t, err)
	marker := "97." + strconv.Itoa(os.Getpid())
	working := strings.TrimSuffix(strings.TrimPrefix(base, "localhost/"), ":1") + "-working-container"
	t.Cleanup(func() {
		for _, pid := range processesWith(t, "sleep "+marker) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		Run(context.Background(), []string{e.Bin, "rm", "-f", working})
		Run(context.Background(), []string{e.Bin, "rmi", base})
	})
	ctxDir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ctxDir, "Dockerfile"), []byte("FROM "+base+"\nRUN sleep "+marker+"\n"), 0o644))

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.Build(ctx, "localhost/harness-test-cancel-never:1", ctxDir) }()
	require.Eventually(t, func() bool { return len(processesWith(t, "sleep "+marker)) > 0 }, time.Minute, 20*time.Millisecond,
		"the RUN step starts")
	start := time.Now()
	cancel()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("Run did not return")
	}
	require.Error(t, err)
	t.Logf("cancelled build ended in %v: %v", time.Since(start), err)
	// The step's processes are SIGKILLed as its runtime ends, which the
	// client need not wait for: on a loaded machine they may still be
	// there for a moment after the build returned (seen in CI: 2 of them).
	require.Eventually(t, func() bool { return len(processesWith(t, "sleep "+marker)) == 0 }, 10*time.Second, 20*time.Millisecond,
		"the step's processes")
	out, err := Run(t.Context(), []string{e.Bin, "ps", "-a", "--external", "--format", "{{.Names}}"})
	require.NoError(t, err)
	require.NotContains(t, string(out), working, "the build's working container")
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left, "the build's temporary directory")
}

// processesWith lists the processes whose command line contains s.
func processesWith(t *testing.T, s string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.Contains(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// podman's -v splits its value at ':': a bind of a path holding one was
// refused by podman in its own words ("invalid option type "/app"") or,
// as /h:/app:ro for /h at /app:ro, mounted elsewhere than asked. Start
// refuses it, naming the path, before the engine runs.
func TestStartRefusesColonInBind(t *testing.T) {
	ran := filepath.Join(t.TempDir(), "ran")
	fake := filepath.Join(t.TempDir(), "podman")
	require.NoError(t, execfile.Write(fake, []byte(`#!/bin/sh
case "$1" in
run) touch `+ran+`; echo ready; exec cat >/dev/null ;;
container) exit 1 ;;
esac
`), 0o755))
	e := &Engine{Name: Podman, Bin: fake}
	for _, b := range []Bind{{Host: "/tmp/a:b", Inner: "/app"}, {Host: "/tmp/a", Inner: "/app:ro"}} {
		r, err := e.Start(t.Context(), Container{Name: "harness-test-colon", Image: "img", Binds: []Bind{b}}, os.Environ())
		if r != nil {
			r.Stop()
		}
		require.ErrorContains(t, err, "isolate podman: cannot bind "+b.Host+" at "+b.Inner+": a path with ':'")
	}
	require.NoFileExists(t, ran, "the engine never ran")
}

// An engine command that prints without end (a build's RUN step writing
// to stderr, which podman build --quiet passes on) is not kept whole in
// memory: only its stderr's tail, for the error's last line. Before,
// Run buffered all of it (64 MiB here, and 64 MiB more as the buffer
// grew).
func TestRunKeepsOnlyStderrTail(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "podman")
	require.NoError(t, execfile.Write(fake, []byte(`#!/bin/sh
head -c 67108864 /dev/zero | tr '\0' x >&2
printf '\nError: building at STEP "RUN flood": exit status 1\n' >&2
exit 1
`), 0o755))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Run(t.Context(), []string{fake, "build"})
	runtime.ReadMemStats(&after)
	require.EqualError(t, err, `podman build: Error: building at STEP "RUN flood": exit status 1`)
	t.Logf("allocated %d bytes", after.TotalAlloc-before.TotalAlloc)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "bytes allocated while the engine printed 64 MiB")
}
