package mcpserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// resolveRoots makes roots absolute with their symlinks resolved; no roots
// is the working directory.
func resolveRoots(roots []string) ([]string, error) {
	if len(roots) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("no root directory: %w", err)
		}
		roots = []string{wd}
	}
	out := make([]string, 0, len(roots))
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return nil, fmt.Errorf("root %q: %w", r, err)
		}
		out = append(out, abs)
	}
	return out, nil
}

// resolveCwd returns the directory a client asked a run to work in,
// confined to the server's roots: a relative cwd is taken from the first
// root (and "" is that root), and the result, with its symlinks resolved
// (so a link cannot lead out), must be a directory inside one of the
// roots. The resolved path is what the agent gets.
func (s *Server) resolveCwd(cwd string) (string, error) {
	if s.rootErr != nil {
		return "", s.rootErr
	}
	p := cwd
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.roots[0], p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("cwd %q is not a directory", cwd)
		}
		return "", fmt.Errorf("cwd %q: %w", cwd, err)
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return "", fmt.Errorf("cwd %q is not a directory", cwd)
	}
	for _, r := range s.roots {
		if within(real, r) {
			return real, nil
		}
	}
	return "", fmt.Errorf("cwd %q is outside the directories this server runs agents in (%s): give a path inside them", cwd, strings.Join(s.roots, ", "))
}

// within reports whether path p (clean, absolute) is root or below it.
func within(p, root string) bool {
	if root == string(filepath.Separator) {
		return true
	}
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}
