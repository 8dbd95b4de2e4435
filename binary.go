package harness

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness/adapters"
)

// FindBinary returns the executable to run for a: explicit when given (a
// path, or a name looked up in PATH), else the first of a's candidate
// names found in dirs and then in the PATH of env. A miss is a
// *NotInstalledError listing every place tried; the returned name is then
// the first candidate, so a command line can still be shown.
func FindBinary(a adapters.Adapter, explicit string, dirs []string, env []string) (string, error) {
	path := lookupEnv(env, "PATH")
	var tried []string
	if explicit != "" {
		if p, ok := executable(explicit, path); ok {
			return p, nil
		}
		return explicit, &NotInstalledError{Agent: a.Name(), Tried: []string{explicit + " (--binary)"}}
	}
	for _, name := range a.Binaries() {
		for _, d := range dirs {
			p := filepath.Join(d, name)
			if isExec(p) {
				return p, nil
			}
			tried = append(tried, p)
		}
		if p, ok := executable(name, path); ok {
			return p, nil
		}
		tried = append(tried, name+" in PATH")
	}
	first := ""
	if bins := a.Binaries(); len(bins) > 0 {
		first = bins[0]
	}
	return first, &NotInstalledError{Agent: a.Name(), Tried: tried}
}

func executable(name, path string) (string, bool) {
	if strings.ContainsRune(name, '/') {
		return name, isExec(name)
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		if p := filepath.Join(d, name); isExec(p) {
			return p, true
		}
	}
	return "", false
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
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

func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}
