package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/agentharness/harness/internal/regfile"
)

// A Harbor task (Harbor's published task format, as terminal-bench 2.0
// and other suites ship it) is a directory holding
//
//	instruction.md        the prompt
//	task.toml             [agent] [verifier] [environment] [solution] [metadata], artifacts
//	environment/Dockerfile (+ its build context); the agent works in WORKDIR
//	tests/test.sh         the verifier, copied to /tests after the agent
//	solution/solve.sh     the reference solution (the oracle agent runs it)
//
// The verifier writes its reward to /logs/verifier/reward.json (an object
// of numbers; "reward" is the score) or /logs/verifier/reward.txt (one
// number); reward.json wins when both exist, as in Harbor.

// HarborTask is what bench honours of a Harbor task (docs/bench.md).
type HarborTask struct {
	Dir string // the task's directory (absolute)
	// AgentTimeout is [agent].timeout_sec (0: none given); VerifierTimeout
	// [verifier].timeout_sec (Harbor's default 600 s).
	AgentTimeout    time.Duration
	VerifierTimeout time.Duration
	// AgentTimeoutZero: [agent].timeout_sec is 0, which Harbor times out
	// at once unless the run gives the agent's timeout.
	AgentTimeoutZero bool
	// AllowInternet is [environment].allow_internet (default true).
	AllowInternet bool
	// BuildTimeout is [environment].build_timeout_sec (Harbor's default
	// 600 s); CPUs and MemoryMB ([environment].cpus, memory_mb, or
	// memory as "2G", which wins) limit a container (0: no limit).
	BuildTimeout time.Duration
	CPUs         float64
	MemoryMB     int
	// Workdir is the image's WORKDIR (environment/Dockerfile), /app when
	// it names none.
	Workdir string
	// Copies are the Dockerfile's COPY/ADD instructions into WORKDIR:
	// the workspace starts with them (no image is built by bwrap or none).
	Copies      []dockerCopy
	VerifierEnv map[string]string // [verifier].env
	SolutionEnv map[string]string // [solution].env
	// Env is [environment].env: set for the agent and the verifier. The
	// values of all three env tables may hold ${VAR} and ${VAR:-default},
	// resolved from the host's environment when the run starts.
	Env map[string]string
	// VerifierInternet is the verifier's network: [verifier].network_mode,
	// else the environment's (AllowInternet is the agent's, from
	// [agent].network_mode, [environment].network_mode or allow_internet).
	VerifierInternet bool
	// Allowlist is set when a phase's network_mode is "allowlist" (or it
	// has allowed_hosts): no engine here enforces one, so the run is
	// refused (ReasonUnsupported).
	Allowlist bool
	// DockerImage is [environment].docker_image, the prebuilt image
	// podman and docker use instead of building environment/Dockerfile.
	DockerImage string
	// StorageMB ([environment].storage_mb, or storage as "10G", which
	// wins) and GPUs
	// ([environment].gpus) are what the environment asks for (0: none).
	StorageMB, GPUs int
	// AgentUser and VerifierUser are [agent].user and [verifier].user
	// (a name or a uid; "": the image's USER).
	AgentUser, VerifierUser string
	// MCPServers are the names of [[environment.mcp_servers]].
	MCPServers []string
	// Artifacts are the top-level artifacts: paths of the environment
	// copied out once the verifier ran.
	Artifacts []Artifact
	// Digest hashes task.toml, environment/ and tests/: what defines the
	// task besides its prompt (part of the plan id).
	Digest string
}

// Artifact is one entry of task.toml's artifacts: a path in the
// environment (Source) and where it goes under the run's artifacts
// directory (Destination; default the source's path without its leading
// slash), without the files matching Exclude (patterns of base names).
// Service is the Docker Compose service it is collected from ("" or
// "main": the agent's environment; another, a sidecar, is unsupported).
type Artifact struct {
	Source, Destination string
	Exclude             []string
	Service             string
}

// harborDefaultTimeout is Harbor's VerifierConfig.timeout_sec and
// EnvironmentConfig.build_timeout_sec.
const harborDefaultTimeout = 600 * time.Second

// isHarborTask reports whether dir holds a Harbor task: an instruction.md
// beside a task.toml that has a [verifier] table.
func isHarborTask(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "instruction.md")); err != nil {
		return false
	}
	m, err := readTOML(filepath.Join(dir, "task.toml"))
	if err != nil {
		return false
	}
	_, ok := m["verifier"].(map[string]any)
	return ok
}

// readTOML reads and parses a task.toml; an error says which of the two
// failed (one that does not exist is fs.ErrNotExist).
func readTOML(p string) (map[string]any, error) {
	b, err := readTaskBytes(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("task.toml cannot be read: %w", err)
	}
	var m map[string]any
	if err := toml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("task.toml: %s", oneLine(err.Error()))
	}
	return m, nil
}

// harborTask reads the Harbor task in dir.
func harborTask(dir string) (Task, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Task{}, err
	}
	t := Task{Name: filepath.Base(abs)}
	// Read in the task's directory only, as tests/ is: a link out would
	// make a host file the prompt.
	var insPath, tomlPath string
	for _, f := range []struct {
		rel string
		dst *string
	}{{"instruction.md", &insPath}, {"task.toml", &tomlPath}} {
		if *f.dst, err = taskPath(abs, f.rel); err != nil {
			return t, err
		}
	}
	ins, err := readTaskBytes(insPath)
	if err != nil {
		return t, err
	}
	if strings.TrimSpace(string(ins)) == "" {
		return t, errors.New("instruction.md is empty")
	}
	t.Prompt = string(ins)
	m, err := readTOML(tomlPath)
	if err != nil {
		return t, err
	}
	h := &HarborTask{Dir: abs, AllowInternet: true}
	section := func(name string) (map[string]any, error) {
		v, ok := m[name]
		if !ok {
			return map[string]any{}, nil
		}
		s, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("task.toml: %s: want a table", name)
		}
		return s, nil
	}
	var agent, verifier, env, solution map[string]any
	for _, s := range []struct {
		name string
		dst  *map[string]any
	}{{"agent", &agent}, {"verifier", &verifier}, {"environment", &env}, {"solution", &solution}} {
		if *s.dst, err = section(s.name); err != nil {
			return t, err
		}
	}
	if h.AgentTimeout, err = seconds(agent, "agent.timeout_sec"); err != nil {
		return t, err
	}
	h.AgentTimeoutZero = h.AgentTimeout == 0 && agent["timeout_sec"] != nil
	if h.VerifierTimeout, err = timeLimit(verifier, "verifier.timeout_sec", "the verifier"); err != nil {
		return t, err
	}
	if v, ok := env["allow_internet"]; ok {
		b, ok := v.(bool)
		if !ok {
			return t, errors.New("task.toml: environment.allow_internet: want true or false")
		}
		h.AllowInternet = b
	}
	if h.BuildTimeout, err = timeLimit(env, "environment.build_timeout_sec", "the build"); err != nil {
		return t, err
	}
	if h.CPUs, h.MemoryMB, err = limits(env); err != nil {
		return t, err
	}
	if h.VerifierEnv, err = stringTable(verifier, "verifier.env"); err != nil {
		return t, err
	}
	if h.SolutionEnv, err = stringTable(solution, "solution.env"); err != nil {
		return t, err
	}
	if h.Env, err = stringTable(env, "environment.env"); err != nil {
		return t, err
	}
	if err := h.readFields(m, agent, verifier, env); err != nil {
		return t, err
	}
	for _, rel := range copiedIn {
		if _, err := taskPath(abs, rel); err != nil {
			return t, err
		}
	}
	if st, err := os.Stat(filepath.Join(abs, "tests", "test.sh")); err != nil || !st.Mode().IsRegular() {
		return t, errors.New("no tests/test.sh (the verifier)")
	}
	dockerfile, err := checkBuildReads(abs)
	if err != nil {
		return t, err
	}
	h.Workdir, h.Copies, err = readDockerfile(dockerfile, h.DockerImage != "")
	if err != nil {
		return t, err
	}
	if err := checkCopies(abs, h.Copies); err != nil {
		return t, err
	}
	if h.Digest, err = digestTask(abs); err != nil {
		return t, err
	}
	t.Harbor = h
	return t, nil
}

// copiedIn are the paths of a Harbor task that a run copies in (to
// /tests and /solution) and runs. A symbolic link among them is followed
// while it stays in the task's directory, and refused when it leaves it
// (taskPath): copied as a link, it would lead the verifier or the oracle
// to the host's files, which a sandbox or container does not show, or
// to nothing.
var copiedIn = []string{"tests", "tests/test.sh", "solution", "solution/solve.sh"}

// buildReads are what of a Harbor task bench and the image build read
// by name, following links: the build context, the Dockerfile (bench's
// own reading and the engine's -f) and the ignore files podman and
// docker read from the context. Each is refused when it is a symbolic
// link out of the task's directory (taskPath), as copiedIn are:
// followed, it made a host file the image's recipe or filter, whatever
// the sandbox hides.
var buildReads = []string{
	"environment", "environment/Dockerfile",
	"environment/.dockerignore", "environment/.containerignore",
	"environment/Dockerfile.dockerignore", "environment/Dockerfile.containerignore",
}

// checkBuildReads refuses the task in dir when one of buildReads is a
// symbolic link out of it or to nothing (taskPath), and returns where its
// Dockerfile is. The load and the image build both call it: a file
// swapped for a link between the two is refused before the engine reads
// it.
func checkBuildReads(dir string) (dockerfile string, err error) {
	for _, rel := range buildReads {
		p, err := taskPath(dir, rel)
		if err != nil {
			return "", err
		}
		if rel == "environment/Dockerfile" {
			dockerfile = p
		}
	}
	return dockerfile, nil
}

// taskPath returns where rel (slash-separated) of the task in dir is,
// its symbolic links followed: a path in dir as it is on disk. A path
// that does not exist is returned as it is named (whoever reads it says
// what is missing); one whose links lead out of dir, or to nothing, is
// an error.
func taskPath(dir, rel string) (string, error) {
	p := filepath.Join(dir, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(p)
	if errors.Is(err, fs.ErrNotExist) {
		if link := danglingLink(dir, rel); link != "" {
			return "", fmt.Errorf("%s: a symbolic link to nothing", link)
		}
		return p, nil
	}
	if err != nil {
		return "", err
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	if real != root && !strings.HasPrefix(real, root+string(filepath.Separator)) {
		return "", fmt.Errorf("%s: a symbolic link out of the task's directory (to %s): not followed", rel, real)
	}
	return real, nil
}

// danglingLink names the first element of rel in dir that is a symbolic
// link leading nowhere, "" when none is.
func danglingLink(dir, rel string) string {
	p := dir
	for _, e := range strings.Split(rel, "/") {
		p = filepath.Join(p, e)
		st, err := os.Lstat(p)
		if err != nil {
			return ""
		}
		if _, err := os.Stat(p); err != nil && st.Mode()&fs.ModeSymlink != 0 {
			r, _ := filepath.Rel(dir, p)
			return filepath.ToSlash(r)
		}
	}
	return ""
}

// seconds reads a number of seconds (Harbor's timeouts are floats).
func seconds(m map[string]any, key string) (time.Duration, error) {
	v, ok := m[key[strings.IndexByte(key, '.')+1:]]
	if !ok {
		return 0, nil
	}
	var f float64
	switch n := v.(type) {
	case int64:
		f = float64(n)
	case float64:
		f = n
	default:
		return 0, fmt.Errorf("task.toml: %s: want a number of seconds", key)
	}
	if !(f >= 0 && f <= 1e7) { // so written, NaN is refused too
		return 0, fmt.Errorf("task.toml: %s = %v: want 0 to 10000000 seconds", key, f)
	}
	d := time.Duration(f * float64(time.Second))
	if f > 0 && d == 0 {
		d = 1 // under a nanosecond is still a timeout, not none (0)
	}
	return d, nil
}

// timeLimit reads a time limit of Harbor's that has a default, 600 s.
// Harbor waits 0 s for what a limit of 0 bounds, so every trial times
// out: a task saying so is refused rather than run with the default.
func timeLimit(m map[string]any, key, what string) (time.Duration, error) {
	d, err := seconds(m, key)
	switch {
	case err != nil:
		return 0, err
	case d > 0:
		return d, nil
	case m[key[strings.IndexByte(key, '.')+1:]] != nil:
		return 0, fmt.Errorf("task.toml: %s = 0: Harbor times %s out at once; want more than 0 seconds", key, what)
	}
	return harborDefaultTimeout, nil
}

// limits reads [environment].cpus and the memory: memory_mb, or memory
// as Harbor's older form ("2G", "512M").
func limits(env map[string]any) (cpus float64, memMB int, err error) {
	num := func(key string) (float64, error) {
		switch n := env[key].(type) {
		case nil:
			return 0, nil
		case int64:
			return float64(n), nil
		case float64:
			return n, nil
		}
		return 0, fmt.Errorf("task.toml: environment.%s: want a number", key)
	}
	c, err := num("cpus")
	if err != nil || !(c >= 0 && c <= 1024) { // NaN too
		return 0, 0, cmpErr(err, fmt.Errorf("task.toml: environment.cpus = %v: want 0 to 1024", c))
	}
	m, err := num("memory_mb")
	if err != nil || !(m >= 0 && m <= 1<<24) {
		return 0, 0, cmpErr(err, fmt.Errorf("task.toml: environment.memory_mb = %v: want 0 to 16777216", m))
	}
	mb, ok, err := olderSize(env, "memory", "\"2G\" or \"512M\"")
	if ok {
		return c, mb, err
	}
	return c, int(m), err
}

// olderSize reads Harbor's older form of a size, memory or storage
// ("2G"), when the task gives it. As in Harbor's EnvironmentConfig, it
// wins over memory_mb or storage_mb.
func olderSize(env map[string]any, key, example string) (mb int, ok bool, err error) {
	v, ok := env[key]
	if !ok {
		return 0, false, nil
	}
	s, isStr := v.(string)
	mb, perr := memoryMB(s)
	if !isStr || perr != nil {
		return 0, true, fmt.Errorf("task.toml: environment.%s = %v: want a size such as %s", key, v, example)
	}
	return mb, true, nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// sizeNumber is the number of a size as Python's float reads it, but
// for its underscores and its words (inf, nan: no size in Harbor).
var sizeNumber = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// memoryMB parses a size as Harbor's _parse_size_to_mb does: a number
// and one unit, G, M or K in any case ("2G", "512m"; "2GB" and "1024"
// are refused), into whole megabytes, rounded down.
func memoryMB(s string) (int, error) {
	s = strings.ToUpper(strings.TrimSpace(s))
	if s == "" {
		return 0, errors.New("bad size")
	}
	perMB := map[byte]float64{'G': 1024, 'M': 1, 'K': 1.0 / 1024}[s[len(s)-1]]
	num := strings.TrimSpace(s[:len(s)-1])
	f, err := strconv.ParseFloat(num, 64)
	if perMB == 0 || !sizeNumber.MatchString(num) || err != nil || !(f >= 0 && f*perMB <= 1<<24) {
		return 0, errors.New("bad size")
	}
	return int(f * perMB), nil
}

func stringTable(m map[string]any, key string) (map[string]string, error) {
	v, ok := m[key[strings.IndexByte(key, '.')+1:]]
	if !ok {
		return nil, nil
	}
	t, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("task.toml: %s: want a table of strings", key)
	}
	out := map[string]string{}
	for k, x := range t {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("task.toml: %s.%s: want a string", key, k)
		}
		out[k] = s
	}
	return out, nil
}

// dockerCopy is one COPY or ADD of the build context into the image.
type dockerCopy struct {
	Srcs []string // relative to environment/
	Dest string   // absolute in the image
}

// readDockerfile returns the image's final WORKDIR (/app when none) and
// its COPY/ADD instructions from the build context (not --from a stage).
// A missing Dockerfile is an image with WORKDIR /app and nothing copied,
// or, when the task names a prebuilt image, WORKDIR "" (the image's own,
// asked of the engine).
func readDockerfile(p string, prebuilt bool) (string, []dockerCopy, error) {
	b, err := readTaskBytes(p)
	if errors.Is(err, fs.ErrNotExist) {
		if prebuilt {
			return "", nil, nil
		}
		return "/app", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	workdir, set := "/", false
	var copies []dockerCopy
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var cont strings.Builder
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cont.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cont.WriteString(line)
		line = strings.TrimSpace(cont.String())
		cont.Reset()
		instr, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		switch strings.ToUpper(instr) {
		case "FROM":
			workdir, set, copies = "/", false, nil // a new stage
		case "WORKDIR":
			if !path.IsAbs(rest) {
				rest = path.Join(workdir, rest)
			}
			workdir, set = path.Clean(rest), true
		case "COPY", "ADD":
			args, from := copyArgs(rest)
			if from || len(args) < 2 {
				continue
			}
			dest := args[len(args)-1]
			dir := strings.HasSuffix(dest, "/")
			if !path.IsAbs(dest) {
				dest = path.Join(workdir, dest)
			}
			if dir {
				dest += "/"
			}
			copies = append(copies, dockerCopy{Srcs: args[:len(args)-1], Dest: dest})
		}
	}
	if err := sc.Err(); err != nil {
		return "", nil, fmt.Errorf("environment/Dockerfile: %w", err)
	}
	if !set {
		workdir = "/app"
	}
	return workdir, copies, nil
}

// checkCopies refuses, when the task loads, a COPY or ADD source that
// the workspace must not be made from (harborRun.workspace): one out of
// the build context (environment/, itself in the task's directory), or
// one that is or holds anything but directories, regular files and
// symbolic links that stay in the context. Copied, a FIFO would hang the
// run, a device fill the disk, a link out bring the host's files (a
// HOME that bwrap hides) into the workspace. A missing source is left
// to the run, which says so (an image may not need it).
func checkCopies(dir string, copies []dockerCopy) error {
	if len(copies) == 0 {
		return nil
	}
	ctxDir, err := taskPath(dir, "environment")
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(ctxDir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, c := range copies {
		for _, src := range c.Srcs {
			names, err := copySources(ctxDir, src)
			if err != nil {
				return fmt.Errorf("environment/Dockerfile: %w", err)
			}
			for _, name := range names {
				if err := checkSource(root, name); err != nil {
					return fmt.Errorf("environment/Dockerfile: COPY %s: %w", src, err)
				}
			}
		}
	}
	return nil
}

// checkSource walks name of the build context root (followed when it is
// a link that stays in it, as docker does); the links under it are
// copied as links (copyConfined), so each must stay in the context too.
func checkSource(root *os.Root, name string) error {
	named := func(p string, err error) error {
		if errors.Is(confinedErr(err), errOutside) {
			return fmt.Errorf("environment/%s: a symbolic link out of the build context (environment/): not followed", p)
		}
		return err
	}
	return fs.WalkDir(root.FS(), name, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == name && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return named(p, err)
		}
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			if _, err := root.Stat(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return named(p, err)
			}
		case !d.IsDir() && !t.IsRegular():
			return fmt.Errorf("environment/%s: %w (%s)", p, regfile.ErrNotRegular, regfile.Kind(t))
		}
		return nil
	})
}

// copySources returns the names, relative to the build context ctxDir,
// that a COPY or ADD source (a path or a pattern) names; an ADD of a URL
// names none. One that leaves the context is refused, as docker does.
func copySources(ctxDir, src string) ([]string, error) {
	if strings.Contains(src, "://") {
		return nil, nil
	}
	p := path.Clean(strings.TrimLeft(src, "/")) // docker reads /x in the context
	if p == ".." || strings.HasPrefix(p, "../") {
		return nil, fmt.Errorf("COPY %s: outside the build context (environment/): refused, as docker refuses it", src)
	}
	matches, _ := filepath.Glob(filepath.Join(ctxDir, filepath.FromSlash(p)))
	names := make([]string, 0, len(matches))
	for _, m := range matches {
		rel, err := filepath.Rel(ctxDir, m)
		if err != nil {
			return nil, err
		}
		names = append(names, filepath.ToSlash(rel))
	}
	return names, nil
}

// copyArgs splits COPY's arguments (the JSON form too), dropping its
// flags; from is set for COPY --from (another stage or image).
func copyArgs(rest string) (args []string, from bool) {
	if strings.HasPrefix(rest, "[") {
		if json.Unmarshal([]byte(rest), &args) == nil {
			return args, false
		}
	}
	for _, f := range strings.Fields(rest) {
		if strings.HasPrefix(f, "--") && len(args) == 0 {
			from = from || strings.HasPrefix(f, "--from")
			continue
		}
		args = append(args, f)
	}
	return args, from
}

// readFields reads what task.toml says of the environment beyond its
// timeouts and limits: the network of each phase, the users, the
// prebuilt image, storage, GPUs, MCP servers and artifacts.
func (h *HarborTask) readFields(m, agent, verifier, env map[string]any) error {
	str := func(sec map[string]any, key string) (string, error) {
		switch v := sec[key[strings.IndexByte(key, '.')+1:]].(type) {
		case nil:
			return "", nil
		case string:
			return v, nil
		}
		return "", fmt.Errorf("task.toml: %s: want a string", key)
	}
	var err error
	if h.DockerImage, err = str(env, "environment.docker_image"); err != nil {
		return err
	}
	for _, u := range []struct {
		sec map[string]any
		key string
		dst *string
	}{{agent, "agent.user", &h.AgentUser}, {verifier, "verifier.user", &h.VerifierUser}} {
		switch v := u.sec["user"].(type) {
		case nil:
		case string:
			*u.dst = v
		case int64:
			if v < 0 {
				return fmt.Errorf("task.toml: %s = %d: want a user name or uid", u.key, v)
			}
			*u.dst = strconv.FormatInt(v, 10)
		default:
			return fmt.Errorf("task.toml: %s: want a user name or uid", u.key)
		}
	}
	count := func(key string, max int64) (int, error) {
		switch v := env[key].(type) {
		case nil:
			return 0, nil
		case int64:
			if v >= 0 && v <= max {
				return int(v), nil
			}
		}
		return 0, fmt.Errorf("task.toml: environment.%s = %v: want a whole number 0 to %d", key, env[key], max)
	}
	if h.GPUs, err = count("gpus", 1024); err != nil {
		return err
	}
	if h.StorageMB, err = count("storage_mb", 1<<30); err != nil {
		return err
	}
	if mb, ok, err := olderSize(env, "storage", "\"10G\""); ok {
		if err != nil {
			return err
		}
		h.StorageMB = mb
	}
	// The network of each phase: its own network_mode, else the
	// environment's, else allow_internet.
	base, err := networkMode(env, "environment", map[bool]string{true: "public", false: "no-network"}[h.AllowInternet])
	if err != nil {
		return err
	}
	am, err := networkMode(agent, "agent", base)
	if err != nil {
		return err
	}
	vm, err := networkMode(verifier, "verifier", base)
	if err != nil {
		return err
	}
	h.AllowInternet, h.VerifierInternet = am == "public", vm == "public"
	h.Allowlist = am == "allowlist" || vm == "allowlist"
	if v, ok := env["mcp_servers"]; ok {
		list, ok := v.([]any)
		if !ok {
			return errors.New("task.toml: environment.mcp_servers: want a list of tables")
		}
		for i, x := range list {
			t, _ := x.(map[string]any)
			name, _ := t["name"].(string)
			if name == "" {
				return fmt.Errorf("task.toml: environment.mcp_servers[%d]: want a table with a name", i)
			}
			h.MCPServers = append(h.MCPServers, name)
		}
	}
	h.Artifacts, err = artifacts(m["artifacts"])
	return err
}

// networkMode reads sec's network_mode (public, no-network, allowlist;
// allowed_hosts alone means allowlist), or def.
func networkMode(sec map[string]any, name, def string) (string, error) {
	mode, hasMode := sec["network_mode"]
	if hosts, ok := sec["allowed_hosts"]; ok {
		l, ok := hosts.([]any)
		if !ok {
			return "", fmt.Errorf("task.toml: %s.allowed_hosts: want a list of host names", name)
		}
		if len(l) > 0 && hasMode && mode != "allowlist" {
			return "", fmt.Errorf("task.toml: %s.allowed_hosts: only with network_mode = \"allowlist\"", name)
		}
		if len(l) > 0 {
			return "allowlist", nil
		}
	}
	if !hasMode {
		return def, nil
	}
	switch mode {
	case "public", "no-network", "allowlist":
		return mode.(string), nil
	}
	return "", fmt.Errorf("task.toml: %s.network_mode = %v: want public, no-network or allowlist", name, mode)
}

// artifacts reads the top-level artifacts: each a path, or a table with
// source, destination and exclude. A source with a .. element is
// refused, as Harbor does (it could leave the directory), and so is a
// destination Harbor refuses (badDestination).
func artifacts(v any) ([]Artifact, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New("task.toml: artifacts: want a list")
	}
	var out []Artifact
	for i, x := range list {
		var a Artifact
		switch e := x.(type) {
		case string:
			a.Source = e
		case map[string]any:
			a.Source, _ = e["source"].(string)
			var ok bool
			if d, has := e["destination"]; has {
				if a.Destination, ok = d.(string); !ok {
					return nil, fmt.Errorf("task.toml: artifacts[%d]: want a destination that is a string", i)
				}
			}
			if ex, has := e["exclude"]; has {
				if a.Exclude, ok = stringList(ex); !ok {
					return nil, fmt.Errorf("task.toml: artifacts[%d]: want exclude as a list of strings", i)
				}
			}
			if sv, has := e["service"]; has {
				if a.Service, ok = sv.(string); !ok {
					return nil, fmt.Errorf("task.toml: artifacts[%d]: want a service that is a string", i)
				}
				a.Service = strings.TrimSpace(a.Service)
				if !composeService.MatchString(a.Service) {
					return nil, fmt.Errorf("task.toml: artifacts[%d]: service %q: want a Docker Compose service name (a letter or digit, then letters, digits, _ . -)", i, a.Service)
				}
			}
			if a.sidecar() && !strings.HasPrefix(a.Source, "/") && !windowsDrive.MatchString(a.Source) {
				return nil, fmt.Errorf("task.toml: artifacts[%d]: source %q from service %q: want an absolute path", i, a.Source, a.Service)
			}
		}
		if a.Source == "" || slices.Contains(strings.Split(a.Source, "/"), "..") {
			return nil, fmt.Errorf("task.toml: artifacts[%d]: want a path, or a table with a source (and a relative destination), without ..", i)
		}
		if why := badDestination(a.Destination); why != "" {
			return nil, fmt.Errorf("task.toml: artifacts[%d]: destination %q: %s", i, a.Destination, why)
		}
		out = append(out, a)
	}
	return out, nil
}

// composeService is a Docker Compose service name as Harbor checks it;
// windowsDrive starts an absolute path of Windows, which Harbor takes
// as a sidecar's source too.
var (
	composeService = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)
	windowsDrive   = regexp.MustCompile(`^[A-Za-z]:[/\\]`)
)

// sidecar reports whether the artifact is collected from a Docker
// Compose service other than the agent's ("main").
func (a Artifact) sidecar() bool { return a.Service != "" && a.Service != "main" }

// badDestination says why Harbor's ArtifactConfig refuses an artifact's
// destination, or "" ("" itself is the default place).
func badDestination(d string) string {
	switch {
	case d == "":
		return ""
	case strings.Contains(d, `\`):
		return "want forward slashes as separators, not \\"
	case strings.HasPrefix(d, "/"):
		return "want a relative path"
	case path.Clean(d) == ".":
		return "want it to name a file or directory"
	case slices.Contains(strings.Split(d, "/"), ".."):
		return "want no .. in it"
	case strings.TrimRight(d, "/") == "manifest.json":
		return "manifest.json is Harbor's, for its collection manifest"
	}
	return ""
}

// stringList is v as a list of strings, ok only when it is one.
func stringList(v any) (l []string, ok bool) {
	items, ok := v.([]any)
	for _, x := range items {
		s, isStr := x.(string)
		if !isStr {
			return nil, false
		}
		l = append(l, s)
	}
	return l, ok
}
