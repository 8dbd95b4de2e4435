package harness

import (
	"cmp"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/process"
)

// findBinary returns the executable to run for a: explicit when given (a
// path, or a name looked up in PATH), else the first of a's candidate
// names found in dirs and then in the PATH of env. A miss is a
// *NotInstalledError listing every place tried; the returned name is then
// the first candidate, so a command line can still be shown. A relative
// path is taken from the current directory (not the task's) and made
// absolute, so the agent's working directory does not change it. from
// says where explicit came from ("": the task, that is --binary).
func findBinary(a adapters.Adapter, explicit, from string, dirs []string, env []string) (string, error) {
	names := a.Binaries()
	if explicit != "" {
		names, dirs = []string{explicit}, nil
	}
	p, err := process.LookPath(names, dirs, "", env)
	if nf, ok := err.(*process.NotFoundError); ok {
		// Name the agent, not the file looked for, and say where a path
		// that was not found came from.
		nf.Name = a.Name()
		if explicit != "" {
			for i := range nf.Tried {
				nf.Tried[i] += " (" + cmp.Or(from, "--binary") + ")"
			}
		}
	}
	if err != nil {
		return names[0], err
	}
	return filepath.Abs(p)
}

// pinnedPath is the PATH of an agent found in one of dirs (the pinned
// installs): that directory first, as npm exec does, so that its
// `#!/usr/bin/env node` runs the node pinned beside it (scripts/agents.sh),
// not an older one on the PATH. Nil for a binary found anywhere else.
func pinnedPath(bin string, dirs, env []string) []string {
	dir := filepath.Dir(bin)
	for _, d := range dirs {
		if filepath.IsAbs(d) && filepath.Clean(d) == dir {
			path := dir
			for _, kv := range env {
				if v, ok := strings.CutPrefix(kv, "PATH="); ok && v != "" {
					path = dir + string(filepath.ListSeparator) + v // the last one wins, as in LookPath
				}
			}
			return []string{"PATH=" + path}
		}
	}
	return nil
}

// mergeEnv returns base with each KEY=VALUE of the overlays set, later
// overlays winning; order of first appearance is kept.
func mergeEnv(base []string, overlays ...[]string) []string {
	idx := map[string]int{}
	out := make([]string, 0, len(base)+8)
	set := func(kv string) {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := idx[k]; ok {
			out[i] = kv
			return
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	for _, kv := range base {
		set(kv)
	}
	for _, o := range overlays {
		for _, kv := range o {
			set(kv)
		}
	}
	return out
}
