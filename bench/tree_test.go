package bench_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/execfile"
)

// scriptAgent runs every agent of a plan as the nop agent with a shell
// script for its binary: what it does in its tree is the test's.
func scriptAgent(t *testing.T, script string) func(bench.Spec, harness.Task) (harness.Task, harness.Observer, error) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "agent.sh")
	require.NoError(t, execfile.Write(bin, []byte("#!/bin/sh\n"+script+"\nprintf '\\036harness-nop\\n'\n"), 0o755))
	return func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
		tk.Agent, tk.Binary, tk.Budgets = "nop", bin, small()
		return tk, harness.Observer{}, nil
	}
}

// fingerprint is every file of dir with its mode and a hash of its content.
func fingerprint(t *testing.T, dir string) map[string]string {
	t.Helper()
	fp := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		v := info.Mode().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		fp[strings.TrimPrefix(p, dir)] = v
		return nil
	}))
	return fp
}

// TestRunsShareNoRepository: a run from a repository gets one of its
// own. What an agent does with git there (a branch, a commit, a stash,
// a config, a tag, a push) reaches neither the next run nor the source
// repository, whose .git is left byte for byte as it was.
func TestRunsShareNoRepository(t *testing.T) {
	src := source(t, true)
	gitRun(t, src, "tag", "v1")
	// Local changes are not part of the starting tree.
	require.NoError(t, os.WriteFile(filepath.Join(src, "sub", "keep.txt"), []byte("edited\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "untracked.txt"), []byte("x\n"), 0o644))
	gitRun(t, src, "status", "--porcelain") // refresh the index now, not later
	before := fingerprint(t, filepath.Join(src, ".git"))

	seen := t.TempDir()
	setup := scriptAgent(t, `
log="`+seen+`/$(basename "$PWD")"
{ echo "branches: $(git for-each-ref --format='%(refname)' refs/heads refs/remotes)"
  echo "stash: $(git stash list)"
  echo "name: $(git config --local user.name)"
  echo "remotes: $(git remote)"
  echo "start: $(cat sub/keep.txt) $(test -e untracked.txt && echo untracked)"
  echo "history: $(git log --format=%s)"; } > "$log"
git checkout -q -b agent-work || echo "checkout -b failed" >> "$log"
echo out > out.txt && git add out.txt && git -c user.name=a -c user.email=a@a commit -qm agent
echo stashed > sub/keep.txt && git -c user.name=a -c user.email=a@a stash -q
git config user.name set-by-agent
git tag agent-tag
git push -q "$(git remote | head -n1)" agent-work 2>/dev/null
git gc -q --prune=now
`)
	runs := t.TempDir()
	plan := bench.Plan{Tasks: []bench.Task{{Prompt: "x", Tree: src}}, Agents: []string{"nop"}, Repeat: 2}
	rep, err := bench.Run(context.Background(), plan, bench.Options{Parallel: 1, Dir: runs, Keep: true, Setup: setup})
	require.NoError(t, err)
	require.Len(t, rep.Runs, 2)

	for _, r := range rep.Runs {
		require.Equal(t, event.ResultSuccess, r.Status, "%+v", r)
		log, err := os.ReadFile(filepath.Join(seen, filepath.Base(r.Tree)))
		require.NoError(t, err)
		require.Equal(t, "branches: \nstash: \nname: \nremotes: \nstart: original \nhistory: start\n", string(log),
			"run %d starts from HEAD alone", r.Repeat)
		require.Equal(t, &bench.FilesChanged{Files: 1, Insertions: 1, Paths: []string{"out.txt"}}, r.Files,
			"measured against the starting tree")
		require.Equal(t, "agent", gitRun(t, r.Tree, "log", "-1", "--format=%s"), "the run's own commit stays in its tree")
	}
	require.Equal(t, before, fingerprint(t, filepath.Join(src, ".git")), "the source repository is unchanged")
	require.Equal(t, "master", gitRun(t, src, "for-each-ref", "--format=%(refname:short)", "refs/heads"))
	require.Equal(t, "v1", gitRun(t, src, "tag"))
	require.Empty(t, gitRun(t, src, "stash", "list"))
	require.NotContains(t, gitRun(t, src, "worktree", "list"), "\n", "the source has no other worktree")
}

// TestRepositoryTreeKeepsItsSource: a run from a shallow clone can read
// its history, and the source's info/exclude hides from files changed
// what it hides in the source.
func TestRepositoryTreeKeepsItsSource(t *testing.T) {
	full := source(t, true)
	require.NoError(t, os.WriteFile(filepath.Join(full, "sub", "keep.txt"), []byte("second\n"), 0o644))
	gitRun(t, full, "commit", "-qam", "second")
	src := filepath.Join(t.TempDir(), "shallow")
	gitRun(t, full, "clone", "-q", "--depth=1", "file://"+full, src)
	require.NoError(t, os.WriteFile(filepath.Join(src, ".git", "info", "exclude"), []byte("*.log\n"), 0o644))

	setup := scriptAgent(t, `echo out > out.txt; echo noise > debug.log`)
	plan := bench.Plan{Tasks: []bench.Task{{Prompt: "x", Tree: src}}, Agents: []string{"nop"},
		Check: `test "$(git log --format=%s)" = second && git fsck --no-progress 2>/dev/null && test "$(cat sub/keep.txt)" = second`}
	rep, err := bench.Run(context.Background(), plan, bench.Options{Dir: t.TempDir(), Setup: setup})
	require.NoError(t, err)
	r := rep.Runs[0]
	require.Equal(t, event.ResultSuccess, r.Status, "%+v", r)
	require.True(t, r.Check.Passed, "%+v", r.Check)
	require.Equal(t, []string{"out.txt"}, r.Files.Paths)
}

// TestSHA256RepositoryTree: a source of SHA-256 objects gets a run
// repository of the same format, which alone can read them.
func TestSHA256RepositoryTree(t *testing.T) {
	src := t.TempDir()
	gitRun(t, src, "init", "-q", "--object-format=sha256")
	require.NoError(t, os.WriteFile(filepath.Join(src, "keep.txt"), []byte("original\n"), 0o644))
	gitRun(t, src, "add", "-A")
	gitRun(t, src, "commit", "-q", "-m", "start")
	setup := scriptAgent(t, `echo out > out.txt`)
	plan := bench.Plan{Tasks: []bench.Task{{Prompt: "x", Tree: src}}, Agents: []string{"nop"},
		Check: `test "$(cat keep.txt)" = original && test "$(git log --format=%s)" = start`}
	rep, err := bench.Run(context.Background(), plan, bench.Options{Dir: t.TempDir(), Setup: setup})
	require.NoError(t, err)
	r := rep.Runs[0]
	require.Equal(t, event.ResultSuccess, r.Status, "%+v", r)
	require.True(t, r.Check.Passed, "%+v", r.Check)
	require.Equal(t, []string{"out.txt"}, r.Files.Paths)
}
