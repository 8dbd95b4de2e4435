package bench

import (
	"context"
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
	switch {
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

// resolveEnv resolves the env tables' templates from the host's
// environment, and notes what the engine does not honour of the task.
func (r *harborRun) resolveEnv() error {
	h := r.h
	var err error
	resolve := func(table string, m map[string]string) []string {
		var out []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			v := envTemplate.ReplaceAllStringFunc(m[k], func(t string) string {
				g := envTemplate.FindStringSubmatch(t)
				if val, ok := os.LookupEnv(g[1]); ok {
					return val
				}
				if g[2] == "" && err == nil {
					err = fmt.Errorf("bench: task.toml: %s.%s: ${%s} is not set", table, k, g[1])
				}
				return g[3]
			})
			out = append(out, k+"="+v)
		}
		return out
	}
	r.env = resolve("environment.env", h.Env)
	r.verifierEnv = append(slices.Clone(r.env), resolve("verifier.env", h.VerifierEnv)...)
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
// cannot be copied (missing) is a warning: the run's verdict stands.
func (r *harborRun) collect(ctx context.Context) {
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
		target := filepath.Join(r.p("logs/artifacts"), filepath.FromSlash(path.Clean(rel)))
		err := os.MkdirAll(filepath.Dir(target), 0o755)
		if err == nil {
			err = r.copyOut(ctx, src, target)
		}
		if err == nil && len(a.Exclude) > 0 {
			err = excludeFiles(target, a.Exclude)
		}
		if err != nil {
			r.warnings = append(r.warnings, "artifact "+a.Source+": "+oneLine(err.Error()))
		}
	}
}

// copyOut copies src of the environment to target on the host: with the
// engine's cp from a container, else from the run directory showing it
// (only the environment's own paths: WORKDIR, /logs, /tests, /solution,
// and under bwrap /tmp and HOME).
func (r *harborRun) copyOut(ctx context.Context, src, target string) error {
	if r.container != nil {
		_, err := isolate.Run(ctx, r.eng.CopyArgs(r.container.Name+":"+src, target))
		return err
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
	host := filepath.Join(m[best], filepath.FromSlash(strings.TrimPrefix(src, best)))
	st, err := os.Stat(host)
	if err != nil {
		return fmt.Errorf("no such file in the environment")
	}
	if st.IsDir() {
		return copyDirTo(host, target)
	}
	return copyFile(host, target, st.Mode().Perm())
}

// excludeFiles removes what under dir has a base name matching one of
// patterns.
func excludeFiles(dir string, patterns []string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		for _, pat := range patterns {
			if ok, _ := path.Match(pat, d.Name()); ok {
				if err := os.RemoveAll(p); err != nil {
					return err
				}
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		return nil
	})
}

// keepArtifacts keeps the run's artifacts (when there are any) beside
// its session log, or in the run's directory when it is kept.
func (r *harborRun) keepArtifacts(rr *RunReport, keep bool) {
	src := r.p("logs/artifacts")
	if entries, err := os.ReadDir(src); err != nil || len(entries) == 0 {
		return
	}
	switch {
	case rr.Log != "":
		dst := filepath.Join(filepath.Dir(rr.Log), rr.Run+".artifacts")
		if err := copyDirTo(src, dst); err != nil {
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

// copyDirTo copies directory src's contents to dst, made when missing.
func copyDirTo(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	return copyTree(src, dst, "")
}
