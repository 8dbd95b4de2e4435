package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/privtmp"
	"github.com/agentharness/harness/isolate"
	"github.com/agentharness/harness/logger"
)

// Outcomes of a Harbor task's verifier (CheckResult.Outcome). Only
// OutcomeReward can pass; the others are failures with a reason, never a
// pass.
const (
	OutcomeReward          = "reward"           // the verifier wrote a reward
	OutcomeVerifierTimeout = "verifier_timeout" // it ran past [verifier].timeout_sec
	OutcomeVerifierError   = "verifier_error"   // it failed without a reward, or wrote one that is not 0..1
	OutcomeNoReward        = "no_reward"        // it exited 0 and wrote no reward
)

// The paths of a Harbor environment (Harbor's EnvironmentPaths).
const (
	harborTests    = "/tests"
	harborLogs     = "/logs"
	harborSolution = "/solution"
)

// harborRun is the directory of one run of a Harbor task on the host:
//
//	RUN/app       the workspace (the task's WORKDIR)
//	RUN/git       the repository that measures the workspace's changes
//	RUN/home      HOME, RUN/tmp /tmp (bwrap)
//	RUN/logs      /logs: agent/, verifier/, artifacts/
//	RUN/tests     /tests, copied once the agent is done
//	RUN/solution  /solution, for the oracle
type harborRun struct {
	dir     string
	h       *HarborTask
	engine  string
	network bool // the agent's
	// own are the bench's own paths, hidden from both phases
	// (bencher.ownPaths).
	own []string
	// env: [environment].env resolved; verifierEnv [verifier].env over
	// it, solutionEnv [solution].env (taskEnv: what task.toml writes is
	// shown, what a template took from the host is redacted).
	env, verifierEnv, solutionEnv taskEnv
	// warnings of the run (RunReport.Warnings); artifactsErr a failure
	// to copy the artifacts out.
	warnings []string
	// tmpEnv points the agent's and the verifier's temporary directory
	// at one of the run's own under --isolate none (runTmp).
	tmpEnv []string
	// The container engine and the run's container (podman, docker).
	eng       *isolate.Engine
	container *isolate.Running
}

func (r *harborRun) p(name string) string { return filepath.Join(r.dir, name) }

// paths maps the environment's paths to the run's directories, for
// --isolate none (no sandbox shows them at their own paths).
func (r *harborRun) paths() map[string]string {
	m := map[string]string{harborTests: r.p("tests"), harborLogs: r.p("logs"), harborSolution: r.p("solution")}
	if r.h.Workdir != "/" {
		m[r.h.Workdir] = r.p("app")
	}
	return m
}

// spec is the bwrap sandbox of a phase: the workspace, /tmp, HOME,
// /logs/agent and /logs/artifacts for the agent; all of /logs and /tests
// for the verifier.
// Neither phase sees, at their host paths, the bench's own files
// (ownPaths: the run directories, with other runs' workspaces and this
// run's tests/; --results, the session logs, the events' file, with
// other runs' transcripts), and the agent does not see the task's
// directory (its tests/ and solution/, which podman never shows it) nor
// the other tasks of its suite (their answers): the host's /tmp and
// HOME, hidden already, need not hold them. (The verifier may run what
// the agent left in the workspace.)
func (r *harborRun) spec(verifier, solution bool) isolate.Spec {
	home := os.Getenv("HOME")
	if home == "" || home == "/" {
		home = "/root"
	}
	s := isolate.Spec{Chdir: r.h.Workdir, Network: r.network, GPUs: r.h.GPUs > 0, Binds: []isolate.Bind{
		{Host: r.p("tmp"), Inner: "/tmp"},
		{Host: r.p("home"), Inner: home},
		{Host: r.p("app"), Inner: r.h.Workdir},
	}, Hide: slices.Clone(r.own)}
	// The task directories of its suite (their answers) are hidden from
	// the verifier too: it may run what the agent left in the workspace.
	// Its tests/ is the run's copy at /tests.
	s.Hide = append(s.Hide, suiteTasks(r.h.Dir)...)
	s.Hide = append(s.Hide, isolate.HostPrivate()...)
	if verifier {
		s.Network = r.h.VerifierInternet
		s.Binds = append(s.Binds, isolate.Bind{Host: r.p("logs"), Inner: harborLogs},
			isolate.Bind{Host: r.p("tests"), Inner: harborTests})
	} else {
		// /logs/artifacts too: what the agent leaves there is kept
		// (Harbor's convention), as under podman where it has all /logs.
		s.Binds = append(s.Binds, isolate.Bind{Host: r.p("logs/agent"), Inner: harborLogs + "/agent"},
			isolate.Bind{Host: r.p("logs/artifacts"), Inner: harborLogs + "/artifacts"})
	}
	if solution {
		s.Binds = append(s.Binds, isolate.Bind{Host: r.p("solution"), Inner: harborSolution, ReadOnly: true})
	}
	return s
}

// ownPaths are the bench's own files and directories, which no run may
// read wherever they lie: its run directories (other runs' workspaces),
// Options.Results (other runs' rows, session logs and trajectories), the
// session logs (Settings.LogDir), the stored reports (StoreDir) and the
// caller's (Options.Hide: the report's and events' files), each also at
// its real path when a symbolic link leads there. The session logs' and
// the stored reports' directories are made now (0700, as their writers
// make them) if missing: a sandbox hides only what exists as it starts,
// and the logs of this run and the next go there while it runs.
func (b *bencher) ownPaths() []string {
	made := []string{StoreDir()}
	if b.opts.Settings != nil && b.opts.Settings.LogDir != "" {
		made = append(made, b.opts.Settings.LogDir)
	}
	for _, d := range made {
		os.MkdirAll(d, 0o700) // what cannot be made is never written either
	}
	var own []string
	for _, p := range slices.Concat([]string{b.dir, b.opts.Results}, made, b.opts.Hide) {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		own = append(own, abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			own = append(own, real)
		}
	}
	return own
}

// suiteTasks are the task's directory and the task directories beside
// it (a task.toml in each): its suite's, whether the bench runs the
// suite or only this task of it. Only the tasks are hidden, not the
// suite's whole directory, which may hold what the agent needs (its
// install, an interpreter).
func suiteTasks(dir string) []string {
	tasks := []string{dir}
	suite := filepath.Dir(dir)
	entries, _ := os.ReadDir(suite)
	for _, e := range entries {
		p := filepath.Join(suite, e.Name())
		if _, err := os.Stat(filepath.Join(p, "task.toml")); err == nil && p != dir {
			tasks = append(tasks, p)
		}
	}
	return tasks
}

// harbor runs one run of a Harbor task: the workspace from the
// Dockerfile's COPY instructions, the agent (the oracle runs
// solution/solve.sh), then tests/ copied to /tests and tests/test.sh run
// with its timeout; its reward is the check's verdict.
//
// rr is a named result: the deferred clean-ups below record their
// failures in the report that is returned, not in a copy of it.
func (b *bencher) harbor(ctx context.Context, s Spec, in RunReport) (rr RunReport) {
	rr = in
	hc := *s.Task.Harbor // this run's: its WORKDIR may come from the image
	h := &hc
	engine := b.engine
	r := &harborRun{dir: filepath.Join(b.dir, treeName(s)), h: h, engine: engine, network: h.AllowInternet}
	if engine == isolate.Bwrap {
		r.own = b.ownPaths()
	}
	fail := func(err error) RunReport {
		if ctx.Err() == nil {
			rr.Status, rr.Reason, rr.Error = event.ResultError, ReasonSetup, err.Error()
		}
		return rr
	}
	if err := isolate.Check(engine); err != nil {
		return fail(err)
	}
	if msg := r.unsupported(s.Agent); msg != "" {
		rr.Status, rr.Reason, rr.Error = event.ResultError, ReasonUnsupported, msg
		return rr
	}
	if err := r.resolveEnv(); err != nil {
		return fail(err)
	}
	if engine == isolate.None || engine == "" {
		env, remove, err := runTmp()
		if err != nil {
			return fail(err)
		}
		defer remove()
		r.tmpEnv = env
	}
	defer func() { rr.Warnings = append(rr.Warnings, r.warnings...) }()
	if h.Workdir == "" && !isolate.IsContainer(engine) {
		h.Workdir = "/app" // a prebuilt image's, which only an engine can read
	}
	if err := os.Mkdir(r.dir, 0o755); err != nil {
		return fail(fmt.Errorf("bench: %w", err))
	}
	defer func() {
		if !b.opts.Keep {
			if err := removeRunDir(r.dir); err != nil && rr.Error == "" {
				rr.Error = "removing the run directory: " + err.Error()
			}
		}
	}()
	if b.opts.Keep {
		rr.Tree = r.p("app")
	}
	var im *taskImage
	if isolate.IsContainer(engine) {
		eng, err := isolate.ContainerEngine(engine)
		if err != nil {
			return fail(err)
		}
		r.eng = eng
		if im, err = b.image(ctx, eng, s.Task.Name, h); err != nil {
			return fail(err)
		}
		if h.Workdir == "" {
			h.Workdir = im.workdir
		}
		if im.note != "" {
			r.warnings = append(r.warnings, im.note)
		}
		defer func() {
			if r.container != nil {
				if err := r.container.Stop(); err != nil && rr.Error == "" {
					rr.Error = "removing the container: " + err.Error()
				}
			}
		}()
	}
	tr, err := r.workspace(ctx, im)
	if err != nil {
		return fail(err)
	}
	oracle := s.Agent == "oracle"
	if oracle {
		if err := r.copyIn(ctx, "solution", "solve.sh", r.p("solution")); err != nil {
			return fail(fmt.Errorf("bench: solution: %w", err))
		}
	}
	prompt := s.Task.Prompt
	if engine == isolate.None {
		prompt = rewritePaths(prompt, r.paths())
	}
	t := harness.Task{Agent: s.Agent, Prompt: prompt, Model: s.Model, Cwd: tr.cwd}
	b.drive(ctx, s, t, tr, &rr, r.tmpEnv, func(t *harness.Task) error {
		b.harborAgent(t, r, oracle)
		if r.eng != nil {
			return b.startContainer(ctx, r.eng, r, im, t, oracle)
		}
		if engine != isolate.Bwrap {
			return nil
		}
		spec := r.spec(false, oracle)
		if home := OwnHome(*t); home != "" {
			spec.Binds = append(spec.Binds, isolate.Bind{Host: home, Inner: home})
		}
		binds, err := SandboxAgentBinds(*t, b.opts.Settings, spec)
		if err != nil {
			return err
		}
		spec.Binds = append(spec.Binds, binds...)
		prefix, err := spec.Prefix()
		t.Sandbox = &harness.Sandbox{Cwd: h.Workdir, Prefix: prefix}
		return err
	}, func() *CheckResult {
		// An agent harness ended (its timeout, a cancel) is over before
		// the verifier looks, as on the host where its group is killed.
		if r.container != nil && (rr.Status == event.ResultTimeout || rr.Status == event.ResultCancelled) {
			if err := r.container.KillAgent(ctx); err != nil {
				return verifierFailed(ctx, "ending the agent's processes: "+err.Error())
			}
		}
		c := r.verify(ctx)
		if ctx.Err() == nil {
			r.collect(ctx)
		}
		return c
	})
	r.keepArtifacts(&rr, b.opts.Keep)
	return rr
}

// checkAgentTimeouts refuses a Harbor task whose [agent].timeout_sec is
// 0 unless the bench gives the agent's timeout (keep: --timeout), as
// Harbor's override_timeout_sec does: without one, Harbor times every
// trial's agent out at once, and a run with bench's configured timeout
// would get a verdict Harbor never gives.
func checkAgentTimeouts(p Plan, keep bool) error {
	for _, t := range p.Tasks {
		if t.Harbor != nil && t.Harbor.AgentTimeoutZero && !keep {
			return fmt.Errorf("bench: task %q: task.toml: agent.timeout_sec = 0: Harbor times the agent out at once; give the agent's timeout (--timeout)", t.Name)
		}
	}
	return nil
}

// removeRunDir removes a run's directory (a variable: a test makes it
// fail).
var removeRunDir = privtmp.RemoveAll

// checkIsolate refuses an engine that is unknown or missing, and a
// sandbox for tasks other than Harbor's (their trees have no WORKDIR to
// be bound at: a later increment).
func checkIsolate(p Plan, engine string) error {
	if err := isolate.Check(engine); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if engine == "" || engine == isolate.None {
		return nil
	}
	for _, t := range p.Tasks {
		if t.Harbor == nil {
			return fmt.Errorf("bench: --isolate %s: task %q is not a Harbor task (only Harbor tasks run isolated for now)", engine, t.Name)
		}
	}
	return nil
}

// harborAgent sets what the task says of its agent: [environment].env,
// [agent].timeout_sec as the hard timeout (unless Options.KeepTimeout),
// and for the oracle its script, [solution].env and no per-tool budget
// (the script is one tool call as long as the run).
func (b *bencher) harborAgent(t *harness.Task, r *harborRun, oracle bool) {
	env := r.env
	if oracle {
		env = env.over(r.solutionEnv)
	}
	settings := b.opts.Settings
	if settings == nil {
		settings = &harness.Settings{}
	}
	// The task's values go over the caller's (--env), --mock's and the
	// configuration's. What task.toml writes is public, in SetupEnv, which
	// the session log shows; what a template took from the host (a key)
	// is in Env, which it redacts. SetupEnv is under the configuration's
	// env for the agent ([agents.NAME].env, put in Env at Start): a key
	// that sets too goes in Env, over it, and is redacted with it.
	configured := configuredEnv(settings, t.Agent)
	var shown, overConfig []string
	for _, kv := range env.written {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := configured[k]; ok {
			overConfig = append(overConfig, kv)
		} else {
			shown = append(shown, kv)
		}
	}
	t.SetupEnv = append(t.SetupEnv, shown...)
	t.Env = append(slices.DeleteFunc(slices.Clone(t.Env), func(kv string) bool { return setsKey(env.written, kv) }), env.host...)
	t.Env = append(t.Env, overConfig...)
	if t.Budgets == nil {
		bud := settings.Budgets()
		t.Budgets = &bud
	}
	bud := *t.Budgets
	if r.h.AgentTimeout > 0 && !b.opts.KeepTimeout {
		bud.Hard = r.h.AgentTimeout
	}
	if oracle {
		script := path.Join(harborSolution, "solve.sh")
		if r.engine == isolate.None {
			script = filepath.Join(r.p("solution"), "solve.sh")
		}
		t.ExtraArgs = []string{script}
		bud.Tool = func(event.Kind) time.Duration { return 0 }
	}
	t.Budgets = &bud
}

// workspace makes the run's directories and its workspace: what the
// Dockerfile copies into WORKDIR, measured by a repository kept outside
// it (RUN/git), so the agent sees the workspace as the image has it.
func (r *harborRun) workspace(ctx context.Context, im *taskImage) (*tree, error) {
	dirs := []string{"app", "logs/agent", "logs/verifier", "logs/artifacts", "solution", "tests"}
	if r.engine == isolate.Bwrap {
		// Only bwrap shows them (spec): a container has its own, and
		// under none the run's temporary directory is runTmp's.
		dirs = append(dirs, "home", "tmp")
	}
	for _, d := range dirs {
		if err := os.MkdirAll(r.p(d), 0o755); err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
	}
	if r.engine == isolate.Bwrap {
		if err := os.Chmod(r.p("tmp"), 0o1777); err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
	}
	// Writable by an [agent].user or [verifier].user of the image.
	for _, d := range []string{"logs", "logs/agent", "logs/verifier", "logs/artifacts"} {
		if err := os.Chmod(r.p(d), 0o777); err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
	}
	ws, ctxDir := r.p("app"), filepath.Join(r.h.Dir, "environment")
	copies := r.h.Copies
	if im != nil { // the image's WORKDIR as built
		if err := seedWorkspace(ctx, im.seed, ws); err != nil {
			return nil, err
		}
		copies = nil
	}
	// Through roots of the context and the workspace: checkCopies vetted
	// the sources when the task loaded, and what changed since, or a link
	// an earlier COPY put in the workspace, leads nothing out either.
	var srcRoot, dstRoot *os.Root
	for _, c := range copies {
		dest := path.Clean(c.Dest)
		if dest != r.h.Workdir && !strings.HasPrefix(dest, strings.TrimSuffix(r.h.Workdir, "/")+"/") {
			continue // outside the workspace: only an image has it
		}
		if srcRoot == nil {
			var err error
			if srcRoot, err = os.OpenRoot(ctxDir); err != nil {
				return nil, fmt.Errorf("bench: %w", err)
			}
			defer srcRoot.Close()
			if dstRoot, err = os.OpenRoot(ws); err != nil {
				return nil, fmt.Errorf("bench: %w", err)
			}
			defer dstRoot.Close()
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(dest, r.h.Workdir), "/")
		intoDir := strings.HasSuffix(c.Dest, "/") || len(c.Srcs) > 1 || rel == ""
		if rel == "" {
			rel = "."
		}
		for _, src := range c.Srcs {
			names, err := copySources(ctxDir, src)
			if err != nil {
				return nil, fmt.Errorf("bench: environment/Dockerfile: %w", err)
			}
			if len(names) == 0 {
				return nil, fmt.Errorf("bench: environment/Dockerfile: COPY %s: no such file in environment/", src)
			}
			for _, name := range names {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				if err := copyInto(dstRoot, rel, srcRoot, name, intoDir); err != nil {
					return nil, fmt.Errorf("bench: environment/Dockerfile: COPY %s: %w", src, err)
				}
			}
		}
	}
	t := &tree{dir: ws, cwd: ws, gitDir: r.p("git")}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "--no-verify", "--allow-empty", "-m", "bench: starting tree"}} {
		if _, err := git(ctx, ws, t.gitArgs(args...)...); err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
	}
	base, err := git(ctx, ws, t.gitArgs("rev-parse", "HEAD")...)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	t.base = base
	return t, nil
}

// copyInto copies name of the build context src (a file or a
// directory's contents) to target in the workspace dst, or into it when
// intoDir, as COPY does. copyConfined opens no FIFO or device and
// follows no link out of either root.
func copyInto(dst *os.Root, target string, src *os.Root, name string, intoDir bool) error {
	st, err := src.Stat(name)
	if err != nil {
		return confinedErr(err)
	}
	if !st.IsDir() {
		if intoDir {
			target = path.Join(target, path.Base(name))
		}
		dst.Remove(target) // a later COPY replaces the file
	}
	return copyConfined(dst, target, src, name, nil)
}

// copyIn copies the task's sub directory to dst (which exists), and its
// script (test.sh, solve.sh) as a file: each followed when it is a
// symbolic link that stays in the task's directory, refused when it
// leaves it (taskPath); other links in sub are copied as links. Under
// --isolate none their text is rewritten to the run's paths. It stops
// at the first file once ctx is done.
func (r *harborRun) copyIn(ctx context.Context, sub, script, dst string) error {
	src, err := taskPath(r.h.Dir, sub)
	if err != nil {
		return err
	}
	if err := copyTree(src, dst, ""); err != nil {
		return err
	}
	if st, err := os.Lstat(filepath.Join(src, script)); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		real, err := taskPath(r.h.Dir, sub+"/"+script)
		if err != nil {
			return err
		}
		st, err := os.Stat(real)
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s/%s: not a regular file", sub, script)
		}
		target := filepath.Join(dst, script)
		if err := os.Remove(target); err != nil {
			return err
		}
		if err := copyFile(real, target, st.Mode().Perm()); err != nil {
			return err
		}
	}
	if r.engine != isolate.None {
		return nil
	}
	m := r.paths()
	return filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			err = ctx.Err()
		}
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) > 4<<20 || slices.Contains(b[:min(len(b), 8192)], 0) {
			return err // binary or large: left as it is
		}
		if out := rewritePaths(string(b), m); out != string(b) {
			st, _ := d.Info()
			return os.WriteFile(p, []byte(out), st.Mode().Perm())
		}
		return nil
	})
}

// rewritePaths replaces each path of m that stands as a path in s (not
// inside a longer name: /app but not /apple, /x/app or ./app) by its
// value, in one pass over s: where several paths start at one place the
// longest that stands as a path wins, each place is replaced once, and
// what a replacement wrote is never looked at again (a value may itself
// hold a path of m: the run's directory under the host's /tmp when /tmp
// is WORKDIR). The boundaries are those of s as given, so two paths
// sharing one (/app:/tests) are both replaced. Its time is linear in
// len(s) times the number of paths.
func rewritePaths(s string, m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(keys, func(a, b string) int { return len(b) - len(a) }) // longest first
	var out strings.Builder
	done := 0 // s[:done] is in out
	for i := 0; i < len(s); i++ {
		if i > 0 && inPathName(s[i-1], true) {
			continue
		}
		for _, k := range keys {
			end := i + len(k)
			if k == "" || !strings.HasPrefix(s[i:], k) || end < len(s) && inPathName(s[end], false) {
				continue
			}
			out.WriteString(s[done:i])
			out.WriteString(m[k])
			done = end
			i = end - 1 // on past the match; the character after it may start the next
			break
		}
	}
	if done == 0 {
		return s
	}
	out.WriteString(s[done:])
	return out.String()
}

// inPathName reports whether c, before (or after) a path, makes it part
// of a longer name: letters, digits and _ . - either side; / and ~
// before (/x/app, ~/app).
func inPathName(c byte, before bool) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.', c == '-':
		return true
	case c == '/', c == '~':
		return before
	}
	return false
}

// verifierCommand is how a Harbor task's verifier shows in the report.
const verifierCommand = "bash /tests/test.sh"

// verifierFailed is the check of a verifier that could not be run, for
// detail: a verifier_error, unless the bench was cancelled meanwhile (a
// podman exec ends with "context canceled"), which is no verdict.
func verifierFailed(ctx context.Context, detail string) *CheckResult {
	c := &CheckResult{Command: verifierCommand, ExitCode: -1}
	if ctx.Err() != nil {
		c.Error = checkCancelled
		return c
	}
	c.Outcome, c.Detail = OutcomeVerifierError, detail
	return c
}

// verify copies tests/ to /tests and runs tests/test.sh in WORKDIR with
// [verifier].timeout_sec and [verifier].env, then reads the reward.
func (r *harborRun) verify(ctx context.Context) *CheckResult {
	fail := func(err error) *CheckResult { return verifierFailed(ctx, err.Error()) }
	// What the agent left in the verifier's directory is not a reward.
	if err := privtmp.RemoveAll(r.p("logs/verifier")); err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(r.p("logs/verifier"), 0o777); err != nil {
		return fail(err)
	}
	if err := os.Chmod(r.p("logs/verifier"), 0o777); err != nil { // for a [verifier].user
		return fail(err)
	}
	if err := privtmp.RemoveAll(r.p("tests")); err != nil {
		return fail(err)
	}
	if err := os.Mkdir(r.p("tests"), 0o755); err != nil {
		return fail(err)
	}
	if err := r.copyIn(ctx, "tests", "test.sh", r.p("tests")); err != nil {
		return fail(fmt.Errorf("copying tests/: %w", err))
	}
	var argv []string
	script := path.Join(harborTests, "test.sh")
	if r.container != nil {
		// tests/ into the container (what the agent left at /tests goes).
		name := r.container.Name
		for _, c := range [][]string{append(r.eng.ExecArgs(name, "/", nil), "rm", "-rf", harborTests),
			r.eng.CopyArgs(r.p("tests"), name+":"+harborTests)} {
			if err := engineStep(ctx, r.h.VerifierTimeout, verifierBound, c); err != nil {
				if st := (*stepTimeout)(nil); errors.As(err, &st) {
					// Harbor bounds the upload of tests/ and the run
					// of test.sh by one timeout (its verify()): past
					// it, the verifier timed out.
					return &CheckResult{Command: verifierCommand, ExitCode: -1, TimedOut: true,
						Outcome: OutcomeVerifierTimeout, Error: "copying tests/: " + err.Error()}
				}
				return fail(fmt.Errorf("copying tests/: %w", err))
			}
		}
		var names []string
		for _, kv := range r.verifierEnv.all() {
			k, _, _ := strings.Cut(kv, "=")
			names = append(names, k)
		}
		argv = r.eng.ExecAsArgs(name, r.h.Workdir, r.h.VerifierUser, names)
	} else if r.engine == isolate.Bwrap {
		prefix, err := r.spec(true, false).Prefix()
		if err != nil {
			return fail(err)
		}
		argv = prefix
	} else {
		script = filepath.Join(r.p("tests"), "test.sh")
	}
	// The verifier's variables are in its environment, not on a command
	// line; what it prints is redacted of the values the host gave them
	// (and of credential shapes), not of what task.toml writes.
	argv = append(argv, "bash", script)
	env := slices.Concat(verifierEnviron(os.Environ()), r.tmpEnv, r.verifierEnv.all())
	c := runCheckIn(ctx, shellJoin(argv), r.p("app"), r.h.VerifierTimeout, env)
	c.Output = logger.DefaultRedactor().WithEnv(r.verifierEnv.host).RedactString(c.Output)
	c.Command = verifierCommand
	switch {
	case c.TimedOut:
		c.Outcome = OutcomeVerifierTimeout
		return c
	case c.cancelled():
		return c
	case c.Error != "":
		// It could not start (the agent removed WORKDIR under none), or
		// its exit status was lost: a verifier_error, a failed check, as
		// verifierFailed's, not a check without a verdict.
		c.Outcome, c.Detail, c.Error = OutcomeVerifierError, c.Error, ""
		return c
	}
	rewards, reward, err := r.reward()
	switch {
	case err != nil:
		c.Outcome, c.Detail = OutcomeVerifierError, err.Error()
	case reward == nil && c.ExitCode != 0:
		c.Outcome, c.Detail = OutcomeVerifierError, "the verifier exited with status "+strconv.Itoa(c.ExitCode)+" and wrote no reward"
	case reward == nil:
		c.Outcome, c.Detail = OutcomeNoReward, "the verifier wrote neither /logs/verifier/reward.json nor reward.txt"
	default:
		c.Outcome, c.Reward, c.Rewards = OutcomeReward, reward, rewards
	}
	c.Passed = c.Reward != nil && *c.Reward >= 1
	return c
}

// reward reads /logs/verifier/reward.json (an object; its "reward" is
// the score, else reward.txt's number) or else reward.txt (one number).
func (r *harborRun) reward() (map[string]float64, *float64, error) {
	logs, err := os.OpenRoot(r.p("logs"))
	if err != nil {
		return nil, nil, fmt.Errorf("bench: %w", err)
	}
	defer logs.Close()
	txt := func() (*float64, error) {
		b, err := readCappedIn(logs, "verifier/reward.txt", 1<<20)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		s := strings.TrimSpace(string(b))
		f, err := pyFloat(s)
		if errors.Is(err, strconv.ErrRange) { // a number, past float64's range
			return nil, fmt.Errorf("reward.txt: %s is out of range: want 0 to 1", clip(s))
		}
		if err != nil {
			return nil, fmt.Errorf("reward.txt: %q is not a number", s)
		}
		return &f, nil
	}
	var rewards map[string]float64
	var reward *float64
	b, err := readCappedIn(logs, "verifier/reward.json", 1<<20)
	switch {
	case err == nil:
		// Raw values: a number past float64's range (Python's json writes
		// 10**400 as it is) is told apart from JSON that does not parse.
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, nil, rewardJSONError(b, err)
		}
		rewards = map[string]float64{}
		for k, v := range m {
			if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
				continue // not a number
			}
			f, err := strconv.ParseFloat(string(v), 64)
			switch {
			case err == nil:
				rewards[k] = f
			case k == "reward":
				return nil, nil, fmt.Errorf("reward.json: %q %s is out of range: want 0 to 1", k, clip(string(v)))
			}
			// Another number out of range is left out of the rewards: no
			// float64 holds it, nor would the report's JSON.
		}
		if f, ok := rewards["reward"]; ok {
			reward = &f
		} else if reward, err = txt(); err != nil {
			return nil, nil, err
		}
		if reward == nil {
			return rewards, nil, errors.New(`reward.json has no number "reward" (and there is no reward.txt)`)
		}
	case errors.Is(err, fs.ErrNotExist):
		if reward, err = txt(); err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, err
	}
	if reward != nil && !(*reward >= 0 && *reward <= 1) { // NaN too
		return rewards, nil, fmt.Errorf("reward %v: want 0 to 1", *reward)
	}
	return rewards, reward, nil
}

// pyFloat parses s as Python's float() does, as Harbor reads reward.txt:
// Go's hexadecimal floats ("0x1p-1") are not numbers there, and an
// underscore between two digits ("0.2_5") is a digit separator.
func pyFloat(s string) (float64, error) {
	if strings.ContainsAny(s, "xX") {
		return 0, strconv.ErrSyntax
	}
	if strings.Contains(s, "_") {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if s[i] == '_' {
				if i == 0 || i == len(s)-1 || !isDigit(s[i-1]) || !isDigit(s[i+1]) {
					return 0, strconv.ErrSyntax
				}
				continue
			}
			b.WriteByte(s[i])
		}
		s = b.String()
	}
	return strconv.ParseFloat(s, 64)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// rewardJSONError says why reward.json did not decode into an object:
// not JSON at all, or Python's NaN and Infinity (its json module writes
// them for floats that are not finite, JSON has no such number), or JSON
// of another kind.
func rewardJSONError(b []byte, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		if at := b[min(max(syn.Offset-1, 0), int64(len(b))):]; bytes.HasPrefix(at, []byte("NaN")) || bytes.HasPrefix(at, []byte("Infinity")) {
			return errors.New("reward.json: not valid JSON: NaN or Infinity, not a finite number: want 0 to 1")
		}
		return fmt.Errorf("reward.json: not valid JSON (%v)", err)
	}
	return errors.New("reward.json: not a JSON object")
}

// clip shortens what a verifier wrote for a message: a number of 400
// digits says no more than its first 32.
func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}

// shellJoin quotes argv for sh -c.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// digestTask hashes task.toml and the files of environment/ and tests/:
// tests/ and tests/test.sh as a run copies them in (copyIn), followed
// when they are symbolic links in the task's directory.
func digestTask(dir string) (string, error) {
	h := sha256.New()
	add := func(p, name string) error {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintf(h, "%s\x00", name)
		_, err = io.Copy(h, f)
		h.Write([]byte{0})
		return err
	}
	if err := add(filepath.Join(dir, "task.toml"), "task.toml"); err != nil {
		return "", err
	}
	type file struct{ path, name string }
	for _, sub := range []string{"environment", "tests"} {
		root := filepath.Join(dir, sub)
		if real, err := taskPath(dir, sub); err == nil {
			root = real // a link in the task's directory leads to what is run or built
		}
		var files []file
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			rel, _ := filepath.Rel(root, p)
			name := sub + "/" + filepath.ToSlash(rel)
			switch {
			case d.Type().IsRegular():
				files = append(files, file{p, name})
			case d.Type()&fs.ModeSymlink != 0 && name == "tests/test.sh":
				real, err := taskPath(dir, name)
				if err != nil {
					return err
				}
				files = append(files, file{real, name})
			}
			return nil
		})
		if err != nil {
			return "", err
		}
		slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.name, b.name) })
		for _, f := range files {
			if err := add(f.path, f.name); err != nil {
				return "", err
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// verifierEnviron is environ (harness's own environment) without what
// a task's verifier is not given: harness's secrets (config.HarnessSecret)
// and the variables whose values are secrets (logger.SecretEnv: the
// agents' API keys, an OTLP collector's headers). Harbor runs the
// verifier in the task's container with the task's env tables alone, as
// bench's containers do (ExecAsArgs passes those names only); on the
// host (none, bwrap) test.sh, the task's code, got them all. A key the
// task's [verifier].env or [environment].env names is still given.
func verifierEnviron(environ []string) []string {
	return slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return config.HarnessSecret(name) || logger.SecretEnv(name)
	})
}
