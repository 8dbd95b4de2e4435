package bench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/agentharness/harness/isolate"
)

// What a Harbor task asks of its environment beyond a workspace and a
// verifier: per-phase networks, users, GPUs, storage, MCP servers, env
// tables and artifacts (docs/bench.md says what each engine honours).

// unsupported says why the run cannot be made as the task asks, or "".
// It is a distinct outcome (ReasonUnsupported), not a failed run.
func (r *harborRun) unsupported(agent string) string {
	h := r.h
	sidecar := slices.IndexFunc(h.Artifacts, Artifact.sidecar)
	switch {
	case sidecar >= 0:
		a := h.Artifacts[sidecar]
		return fmt.Sprintf("the task's artifact %s is collected from the Docker Compose service %q: bench runs one environment, no compose services", a.Source, a.Service)
	case h.Allowlist:
		return "the task's network_mode is allowlist: no engine here enforces allowed_hosts"
	case h.GPUs > 0 && !isolate.HostGPUs():
		return fmt.Sprintf("the task needs %d GPU(s) ([environment].gpus) and this machine has none", h.GPUs)
	case len(h.MCPServers) > 0 && agent != "oracle" && agent != "nop":
		return fmt.Sprintf("the task's MCP servers (%s) cannot be given to %s: bench does not configure an agent's MCP servers",
			strings.Join(h.MCPServers, ", "), agent)
	case isolate.IsContainer(r.engine) && h.AllowInternet != h.VerifierInternet:
		return "the agent's and the verifier's network_mode differ: under " + r.engine +
			" both run in one container, with one network (bwrap gives each its own)"
	}
	return ""
}

// envTemplate is ${VAR} or ${VAR:-default} in an env table's value.
var envTemplate = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// taskEnv is a task's env table resolved, KEY=VALUE with distinct keys,
// split by where each value came from. written: what task.toml writes (a
// template's default among it), public, shown in logs and reports as the
// task file shows it. host: a value a template took from the host's
// environment (${OPENAI_API_KEY}), whole, redacted as --env's values are.
type taskEnv struct{ written, host []string }

func (e taskEnv) all() []string { return slices.Concat(e.written, e.host) }

// over is e with o's entries over its own: a key of both has o's value.
func (e taskEnv) over(o taskEnv) taskEnv {
	all := o.all()
	keep := func(l []string) []string {
		return slices.DeleteFunc(slices.Clone(l), func(kv string) bool { return setsKey(all, kv) })
	}
	return taskEnv{written: append(keep(e.written), o.written...), host: append(keep(e.host), o.host...)}
}

// setsKey reports whether env sets the key of kv.
func setsKey(env []string, kv string) bool {
	k, _, _ := strings.Cut(kv, "=")
	return slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, k+"=") })
}

// resolveEnv resolves the env tables' templates from the host's
// environment, and notes what the engine does not honour of the task.
func (r *harborRun) resolveEnv() error {
	h := r.h
	var err error
	resolve := func(table string, m map[string]string) taskEnv {
		var out taskEnv
		for _, k := range slices.Sorted(maps.Keys(m)) {
			host := false
			v := envTemplate.ReplaceAllStringFunc(m[k], func(t string) string {
				g := envTemplate.FindStringSubmatch(t)
				if val, ok := os.LookupEnv(g[1]); ok {
					host = true
					return val
				}
				if g[2] == "" && err == nil {
					err = fmt.Errorf("bench: task.toml: %s.%s: ${%s} is not set", table, k, g[1])
				}
				return g[3]
			})
			if host {
				out.host = append(out.host, k+"="+v)
			} else {
				out.written = append(out.written, k+"="+v)
			}
		}
		return out
	}
	r.env = resolve("environment.env", h.Env)
	r.verifierEnv = r.env.over(resolve("verifier.env", h.VerifierEnv))
	r.solutionEnv = resolve("solution.env", h.SolutionEnv)
	if !isolate.IsContainer(r.engine) {
		for _, u := range []struct{ field, user string }{{"[agent].user", h.AgentUser}, {"[verifier].user", h.VerifierUser}} {
			if u.user != "" {
				r.warnings = append(r.warnings, fmt.Sprintf("%s = %q not honoured under %s: it runs as the host's user", u.field, u.user, r.engine))
			}
		}
		if h.StorageMB > 0 {
			r.warnings = append(r.warnings, fmt.Sprintf("[environment].storage_mb = %d not enforced under %s", h.StorageMB, r.engine))
		}
	}
	return err
}

// collect copies the task's artifacts out of the environment into the
// run's logs/artifacts (where /logs/artifacts already is). One that
// cannot be copied (missing, or reached through a link out of the
// environment) is a warning: the run's verdict stands.
func (r *harborRun) collect(ctx context.Context) {
	if len(r.h.Artifacts) == 0 {
		return
	}
	artifacts, err := openArtifacts(r.p("logs"), true)
	if err != nil {
		r.warnings = append(r.warnings, "artifacts: "+oneLine(err.Error()))
		return
	}
	defer artifacts.Close()
	for _, a := range r.h.Artifacts {
		src := a.Source
		if !path.IsAbs(src) {
			src = path.Join(r.h.Workdir, src)
		}
		src = path.Clean(src)
		rel := a.Destination
		if rel == "" {
			rel = strings.TrimPrefix(src, "/")
		}
		if err := r.copyOut(ctx, src, artifacts, path.Clean(rel), a.Exclude); err != nil {
			r.warnings = append(r.warnings, "artifact "+a.Source+": "+oneLine(err.Error()))
		}
	}
}

// copyOut copies src of the environment to target in artifacts, leaving out
// what matches exclude: with the engine's cp from a container (into a
// directory of the run's that no sandbox shows), else from the run
// directory showing it (only the environment's own paths: WORKDIR,
// /logs, /tests, /solution, and under bwrap /tmp and HOME). Either way,
// what is copied is read and written through an os.Root (copyConfined).
func (r *harborRun) copyOut(ctx context.Context, src string, artifacts *os.Root, target string, exclude []string) error {
	if r.container != nil {
		stage, err := os.MkdirTemp(r.dir, "artifact-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(stage)
		if err := engineStep(ctx, r.h.VerifierTimeout, verifierBound, r.eng.CopyArgs(r.container.Name+":"+src, filepath.Join(stage, "a"))); err != nil {
			return err
		}
		return copyFromDir(artifacts, target, stage, "a", exclude)
	}
	m := r.paths()
	if r.engine == isolate.Bwrap {
		for _, b := range r.spec(true, true).Binds {
			m[b.Inner] = b.Host
		}
	}
	best := ""
	for inner := range m {
		if (src == inner || strings.HasPrefix(src, strings.TrimSuffix(inner, "/")+"/")) && len(inner) > len(best) {
			best = inner
		}
	}
	if best == "" {
		return fmt.Errorf("not in the environment's own paths under %s", r.engine)
	}
	name := strings.TrimPrefix(strings.TrimPrefix(src, best), "/")
	if name == "" {
		name = "."
	}
	err := copyFromDir(artifacts, target, m[best], name, exclude)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no such file in the environment")
	}
	return err
}

// copyFromDir is copyConfined from name under the directory dir.
func copyFromDir(dst *os.Root, target, dir, name string, exclude []string) error {
	src, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer src.Close()
	return copyConfined(dst, target, src, name, exclude)
}

// openArtifacts opens the run's logs/artifacts, made when missing if
// create. The agent (all of /logs under podman) or the verifier may have
// made it a symbolic link, even to another directory of /logs: it is
// not followed, so no artifact is written, nor kept, outside it.
func openArtifacts(logs string, create bool) (*os.Root, error) {
	root, err := os.OpenRoot(logs)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if create {
		if err := root.Mkdir("artifacts", 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	st, err := root.Lstat("artifacts")
	if err != nil {
		return nil, err
	}
	errLink := errors.New("/logs/artifacts is not a directory (a symbolic link is not followed)")
	if !st.IsDir() {
		return nil, errLink
	}
	artifacts, err := root.OpenRoot("artifacts")
	if err != nil {
		return nil, confinedErr(err)
	}
	// Made a link between the Lstat and the open.
	if now, err := artifacts.Stat("."); err != nil || !os.SameFile(st, now) {
		artifacts.Close()
		return nil, errLink
	}
	return artifacts, nil
}

// keepArtifacts keeps the run's artifacts (when there are any) beside
// its session log, or in the run's directory when it is kept.
func (r *harborRun) keepArtifacts(rr *RunReport, keep bool) {
	src := r.p("logs/artifacts")
	artifacts, err := openArtifacts(r.p("logs"), false)
	if err != nil {
		if w := "artifacts: " + oneLine(err.Error()); !errors.Is(err, fs.ErrNotExist) && !slices.Contains(r.warnings, w) {
			r.warnings = append(r.warnings, w)
		}
		return
	}
	defer artifacts.Close()
	if entries, err := fs.ReadDir(artifacts.FS(), "."); err != nil || len(entries) == 0 {
		return
	}
	switch {
	case rr.Log != "":
		dst := filepath.Join(filepath.Dir(rr.Log), rr.Run+".artifacts")
		err := os.MkdirAll(dst, 0o755)
		if err == nil {
			err = keepFrom(artifacts, dst)
		}
		if err != nil {
			if rr.Error == "" {
				rr.Error = "keeping the artifacts: " + err.Error()
			}
			return
		}
		rr.Artifacts = dst
	case keep:
		rr.Artifacts = src
	}
}

// keepFrom copies the run's artifacts to the directory dst.
func keepFrom(artifacts *os.Root, dst string) error {
	to, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer to.Close()
	return copyConfined(to, ".", artifacts, ".", nil)
}

// copyDirTo copies directory src's contents to dst, made when missing.
func copyDirTo(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	return copyTree(src, dst, "")
}
