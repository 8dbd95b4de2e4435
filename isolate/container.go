package isolate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Container engines: podman and docker share one code path (the same CLI
// verbs); the *Args methods say where their command lines differ.
const (
	Podman = "podman"
	Docker = "docker"
)

// Label marks every image and container harness makes, so that they can
// be listed (podman ps -a --filter label=harness.run) and removed.
const Label = "harness.run"

// Engine is a container engine's CLI.
type Engine struct {
	Name string // Podman or Docker
	Bin  string // its executable
}

// ContainerEngine returns the engine named name, or a one-line error when
// its CLI is not installed.
func ContainerEngine(name string) (*Engine, error) {
	if name != Podman && name != Docker {
		return nil, fmt.Errorf("isolate %q: not a container engine", name)
	}
	bin, err := exec.LookPath(name)
	if err != nil {
		if name == Podman {
			return nil, errors.New("isolate podman: podman is not installed (make podman, or apt-get install podman runc)")
		}
		return nil, errors.New("isolate docker: docker is not installed")
	}
	return &Engine{Name: name, Bin: bin}, nil
}

// ImageExistsArgs is the command that exits 0 when image is present.
func (e *Engine) ImageExistsArgs(image string) []string {
	if e.Name == Docker {
		return []string{e.Bin, "image", "inspect", "--format", "{{.Id}}", image}
	}
	return []string{e.Bin, "image", "exists", image}
}

// BuildArgs builds contextDir's Dockerfile as image (Build runs it, and
// removes what a cancelled podman build left).
func (e *Engine) BuildArgs(image, contextDir string) []string {
	return []string{e.Bin, "build", "--quiet", "--label", Label + "=image", "-t", image,
		"-f", filepath.Join(contextDir, "Dockerfile"), contextDir}
}

// Container is one run's container.
type Container struct {
	Name    string
	Image   string
	Workdir string  // where exec'd processes start
	CPUs    float64 // 0: no limit
	// MemoryMB limits the container's memory (0: no limit).
	MemoryMB int
	// StorageMB limits the container's writable layer (0: no limit):
	// --storage-opt size, which the engine's storage supports only on
	// some file systems (overlay on XFS with quotas); Start says when not.
	StorageMB int
	// GPUs asks for the host's GPUs (0: none): podman's CDI device
	// nvidia.com/gpu=all, docker's --gpus N.
	GPUs int
	// Network: the host's network (the agent reaches a model API on the
	// host's loopback, the scripted model's) or none (loopback only).
	Network bool
	Binds   []Bind
	// User is who what Running's exec starts runs as (a name or uid;
	// "": the image's USER).
	User string
	// Lifetime bounds the container whatever becomes of harness: its
	// first process ends after it (0: unbounded but for stdin).
	Lifetime time.Duration
}

// RunArgs starts c in the foreground, attached to its stdin: its first
// process (under the engine's init, which reaps what the agent leaves)
// waits for EOF on stdin, so when the process holding the other end
// (harness) dies, even by SIGKILL, the container ends and --rm removes
// it. Lifetime is a second bound.
func (e *Engine) RunArgs(c Container) []string {
	args := []string{e.Bin, "run", "--rm", "-i", "--init", "--name", c.Name, "--label", Label + "=" + c.Name,
		"--log-driver", "none"}
	if c.CPUs > 0 {
		args = append(args, "--cpus", strconv.FormatFloat(c.CPUs, 'f', -1, 64))
	}
	if c.MemoryMB > 0 {
		args = append(args, "--memory", strconv.Itoa(c.MemoryMB)+"m")
	}
	if c.StorageMB > 0 {
		args = append(args, "--storage-opt", "size="+strconv.Itoa(c.StorageMB)+"m")
	}
	if c.GPUs > 0 {
		if e.Name == Docker {
			args = append(args, "--gpus", strconv.Itoa(c.GPUs))
		} else {
			args = append(args, "--device", "nvidia.com/gpu=all")
		}
	}
	if c.Network {
		args = append(args, "--network", "host")
	} else {
		args = append(args, "--network", "none")
	}
	for _, b := range c.Binds {
		v := b.Host + ":" + b.Inner
		if b.ReadOnly {
			v += ":ro"
		}
		args = append(args, "-v", v)
	}
	if c.Workdir != "" {
		args = append(args, "-w", c.Workdir)
	}
	// The ready line tells harness the container is up; then it waits
	// for stdin's EOF (or the lifetime), with the shell of every image.
	wait := "echo ready; cat >/dev/null"
	if c.Lifetime > 0 {
		// An asynchronous list's stdin is /dev/null unless redirected.
		wait = fmt.Sprintf("echo ready; exec 3<&0; (cat <&3 >/dev/null; kill $$) & sleep %d; exit 0", int(c.Lifetime.Seconds())+1)
	}
	return append(args, "--entrypoint", "/bin/sh", c.Image, "-c", wait)
}

// ExecArgs is the prefix that runs a command in container name, in dir,
// with the variables of env: a KEY is taken from the environment of the
// exec command itself (its value never appears on a command line), a
// KEY=VALUE is set as given.
func (e *Engine) ExecArgs(name, dir string, env []string) []string {
	return e.ExecAsArgs(name, dir, "", env)
}

// ExecAsArgs is ExecArgs run as user (a name or uid; "": the image's
// USER).
func (e *Engine) ExecAsArgs(name, dir, user string, env []string) []string {
	args := []string{e.Bin, "exec", "-i"}
	if user != "" {
		args = append(args, "--user", user)
	}
	if dir != "" {
		args = append(args, "-w", dir)
	}
	for _, kv := range env {
		args = append(args, "-e", kv)
	}
	return append(args, name)
}

// CreateArgs creates (does not start) a container of image, to copy
// files out of it.
func (e *Engine) CreateArgs(name, image string) []string {
	return []string{e.Bin, "create", "--name", name, "--label", Label + "=" + name, image}
}

// RemoveArgs removes container name at once, running or not.
func (e *Engine) RemoveArgs(name string) []string {
	if e.Name == Docker {
		return []string{e.Bin, "rm", "-f", name}
	}
	return []string{e.Bin, "rm", "-f", "-t", "0", "--ignore", name}
}

// ExistsArgs succeeds while container name exists (removed or never
// made: it fails).
func (e *Engine) ExistsArgs(name string) []string {
	if e.Name == Docker {
		return []string{e.Bin, "container", "inspect", "--format", "{{.Id}}", name}
	}
	return []string{e.Bin, "container", "exists", name}
}

// CopyArgs copies src to dst, one of them CONTAINER:PATH.
func (e *Engine) CopyArgs(src, dst string) []string {
	return []string{e.Bin, "cp", src, dst}
}

// Run runs one of the command lines above and returns its output, or a
// one-line error with the end of what it printed on stderr (of which
// only the tail is kept). The engine's client
// runs in its own process group (a terminal's ^C is harness's to handle,
// as for Start); when ctx ends it is asked to stop (interrupt), then
// killed 10 s later: time for podman to remove what a build made.
func Run(ctx context.Context, argv []string) ([]byte, error) {
	var out bytes.Buffer
	// Only stderr's last line is told; a build's RUN steps write theirs
	// there, without bound.
	errb := &tailWriter{max: 64 << 10}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// What the client leaves holding its output must not hold Run.
	cmd.WaitDelay = runGrace
	err := ctx.Err()
	if err == nil {
		err = cmd.Start()
	}
	if err == nil {
		err = wait(ctx, cmd)
	}
	if err != nil {
		msg := errb.last()
		if msg == "" {
			msg = err.Error()
		}
		return out.Bytes(), fmt.Errorf("%s %s: %s", filepath.Base(argv[0]), argv[1], msg)
	}
	return out.Bytes(), nil
}

// wait waits for cmd, started. When ctx ends first, the engine's client
// is asked to stop (interrupt), and killed with its process group
// (Setpgid) if it has not ended runGrace later: exec.Cmd's WaitDelay
// kills the client alone, and what it started in its group would
// outlive it. A command that succeeds once interrupted fails with
// ctx's error, as with exec.CommandContext.
func wait(ctx context.Context, cmd *exec.Cmd) error {
	exited, interrupted := make(chan struct{}), make(chan bool, 1)
	go func() { // done when wait returns: nothing of Run outlives it
		select {
		case <-exited:
			interrupted <- false
			return
		case <-ctx.Done():
		}
		defer func() { interrupted <- true }()
		interrupt(cmd.Process)
		grace := time.NewTimer(runGrace)
		defer grace.Stop()
		select {
		case <-exited:
		case <-grace.C:
			// Only while the client is not reaped (Wait makes Signal fail
			// then): after, its pgid could name another's group.
			if cmd.Process.Signal(syscall.Signal(0)) == nil {
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
			cmd.Process.Kill()
		}
	}()
	err := cmd.Wait()
	close(exited)
	if <-interrupted && err == nil {
		err = ctx.Err()
	}
	return err
}

// runGrace is how long Run waits for an interrupted engine command to
// end before killing it (a variable: a test shortens it).
var runGrace = 10 * time.Second

// stepRuntime is what podman calls itself when it re-executes itself to
// run the container of a build's RUN step.
const stepRuntime = "buildah-oci-runtime"

// interrupt asks an engine's client to stop, so that it cleans up behind
// it: not SIGKILL, exec.CommandContext's default. For podman (4.3) in a
// build's RUN step not even SIGINT or SIGTERM: it exits at once on
// either and leaves the step's processes running, its working container
// (which has no Label: prune cannot find it) and its $TMPDIR/buildah*
// directory. The step's runtime does handle SIGTERM: it kills the
// step's container, the step fails, and podman removes what it made and
// exits, as after any failed step. So SIGTERM goes to the step runtimes
// when there are some, else SIGINT to the client itself, what ^C sends
// (docker cancels the build or pull in its daemon; podman between two
// steps exits, leaving a working container with no process in it, which
// Build removes).
//
// The step's container is killed first, by its init (the runtime's
// child, in a session of its own): the runtime catches SIGTERM only once
// the container has started, and one that gets it just before dies of it
// and leaves the container running (seen in CI: the step's processes
// outlived the cancelled build).
func interrupt(p *os.Process) error {
	steps := childrenNamed(p.Pid, stepRuntime)
	for _, pid := range steps {
		for _, init := range childrenNamed(pid, "") {
			syscall.Kill(-init, syscall.SIGKILL) // its group: all of it without a PID namespace too
			syscall.Kill(init, syscall.SIGKILL)
		}
		syscall.Kill(pid, syscall.SIGTERM)
	}
	if len(steps) > 0 {
		return nil
	}
	return p.Signal(os.Interrupt) // ESRCH is os.ErrProcessDone
}

// childrenNamed lists the processes whose parent is ppid and whose
// argv[0] is name ("": any).
func childrenNamed(ppid int, name string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		// "pid (comm) state ppid …": comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if err != nil || i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(ppid) {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if argv0, _, _ := bytes.Cut(cmdline, []byte{0}); name == "" || string(argv0) == name {
			pids = append(pids, pid)
		}
	}
	return pids
}

// ImageWorkdirArgs prints image's WORKDIR (empty when it sets none).
func (e *Engine) ImageWorkdirArgs(image string) []string {
	return []string{e.Bin, "image", "inspect", "--format", "{{.Config.WorkingDir}}", image}
}

// QualifiedImage names image with its registry: a Docker Hub short name
// as Docker reads it (alexgshaw/x:1 is docker.io/alexgshaw/x:1, ubuntu
// docker.io/library/ubuntu), which podman does not resolve by itself
// without unqualified-search registries. A name whose first element is
// a host (a dot, a port, localhost) is left as it is.
func QualifiedImage(image string) string {
	first, rest, found := strings.Cut(image, "/")
	if found && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return image
	}
	if !found {
		return "docker.io/library/" + image
	}
	return "docker.io/" + first + "/" + rest
}

// PullArgs fetches image from its registry.
func (e *Engine) PullArgs(image string) []string {
	return []string{e.Bin, "pull", "--quiet", image}
}

// HostGPUs reports whether the host has NVIDIA GPUs a container or a
// sandbox can be given: a /dev/nvidia0 device.
func HostGPUs() bool {
	_, err := os.Stat("/dev/nvidia0")
	return err == nil
}

// HostEnv reports whether an environment variable describes the host
// rather than the agent (PATH, HOME, the user, the terminal's session,
// the host's Go toolchain): those are not carried into a container when
// the agent merely inherits them. What the caller hands the agent by
// name goes in whatever its name (StartAgentContainer).
func HostEnv(key string) bool {
	switch key {
	case "PATH", "HOME", "OLDPWD", "SHLVL", "_", "HOSTNAME", "USER", "LOGNAME", "SHELL", "MAIL",
		"TMPDIR", "TMP", "TEMP", "SSH_AUTH_SOCK", "SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY",
		"DBUS_SESSION_BUS_ADDRESS", "CONTAINERS_CONF", "DOCKER_HOST":
		return true
	}
	return goToolchainEnv[key] ||
		slices.ContainsFunc([]string{"XDG_", "LD_", "CONTAINER_"}, func(p string) bool { return strings.HasPrefix(key, p) })
}

// goToolchainEnv are the go command's own variables, exactly those `go
// help environment` lists (Go 1.26): the host's Go install, caches and
// settings (GOROOT, GOPATH, GOCACHE, GOFLAGS…), which would point an
// image's own Go at paths it does not have. Named one by one, not as
// GO*: GOOGLE_API_KEY and GOOGLE_GEMINI_BASE_URL are the agent's.
var goToolchainEnv = map[string]bool{
	"GO111MODULE": true, "GO386": true, "GOAMD64": true, "GOARCH": true, "GOARM": true, "GOARM64": true,
	"GOAUTH": true, "GOBIN": true, "GOCACHE": true, "GOCACHEPROG": true, "GOCOVERDIR": true,
	"GODEBUG": true, "GOENV": true, "GOEXE": true, "GOEXPERIMENT": true, "GOFIPS140": true,
	"GOFLAGS": true, "GOGCCFLAGS": true, "GOHOSTARCH": true, "GOHOSTOS": true, "GOINSECURE": true,
	"GOMIPS": true, "GOMIPS64": true, "GOMOD": true, "GOMODCACHE": true, "GONOPROXY": true,
	"GONOSUMDB": true, "GOOS": true, "GOPATH": true, "GOPPC64": true, "GOPRIVATE": true,
	"GOPROXY": true, "GORISCV64": true, "GOROOT": true, "GOSUMDB": true, "GOTELEMETRY": true,
	"GOTELEMETRYDIR": true, "GOTMPDIR": true, "GOTOOLCHAIN": true, "GOTOOLDIR": true,
	"GOVCS": true, "GOVERSION": true, "GOWASM": true, "GOWORK": true, "GO_EXTLINK_ENABLED": true,
}
