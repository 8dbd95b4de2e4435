package bench_test

import (
	"context"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/event"
)

// runOnce runs a one-run plan from src whose agent writes out.txt, with
// the check given, and returns its row.
func runOnce(t *testing.T, src, check string, keep bool) bench.RunReport {
	t.Helper()
	plan := bench.Plan{Tasks: []bench.Task{{Prompt: "x", Tree: src}}, Agents: []string{"nop"}, Check: check}
	rep, err := bench.Run(context.Background(), plan, bench.Options{Dir: t.TempDir(), Keep: keep,
		Setup: scriptAgent(t, `echo out > out.txt`)})
	require.NoError(t, err)
	require.Len(t, rep.Runs, 1)
	return rep.Runs[0]
}

// onlyGitConfig makes the tests' git (and bench's) read no system config
// and the global config given, so what git-lfs does depends on the test.
func onlyGitConfig(t *testing.T, global string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "gitconfig")
	require.NoError(t, os.WriteFile(f, []byte(global), 0o644))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", f)
}

// lfsRepo makes a repository at dir whose big.bin is kept in git LFS.
func lfsRepo(t *testing.T, dir string) {
	t.Helper()
	gitRun(t, dir, "init", "-q")
	gitRun(t, dir, "lfs", "track", "*.bin")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.bin"), []byte(rand.Text()+"\n"), 0o644))
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "start")
}

// TestLFSRepositoryTree: a run's tree holds the files of the source's
// checkout of HEAD, not what git stores for LFS files: the content, from
// the source's LFS store, when the source has it, else the pointer the
// source's checkout shows too; never a download.
func TestLFSRepositoryTree(t *testing.T) {
	_, err := exec.LookPath("git-lfs")
	require.NoError(t, err, "git-lfs is needed (Debian: apt-get install git-lfs)")
	same := `cmp big.bin "$SRC/big.bin" && test -z "$(git status --porcelain big.bin)"`

	t.Run("filter-in-source-config", func(t *testing.T) {
		// git lfs install --local: the filter is the source's alone.
		onlyGitConfig(t, "")
		src := t.TempDir()
		gitRun(t, src, "init", "-q")
		gitRun(t, src, "lfs", "install", "--local")
		lfsRepo(t, src)
		require.NotContains(t, readFile(t, filepath.Join(src, "big.bin")), "git-lfs.github.com/spec", "the source has the content")
		t.Setenv("SRC", src)
		r := runOnce(t, src, same, true)
		require.Equal(t, event.ResultSuccess, r.Status, "%+v", r)
		require.True(t, r.Check.Passed, "the run has the source's file: %+v", r.Check)
		require.Equal(t, []string{"out.txt"}, r.Files.Paths)

		// Kept, the tree has the content of its LFS files without the source.
		want := readFile(t, filepath.Join(src, "big.bin"))
		require.NoError(t, os.RemoveAll(src))
		require.NoError(t, os.Remove(filepath.Join(r.Tree, "big.bin")))
		gitRun(t, r.Tree, "checkout", "big.bin")
		require.Equal(t, want, readFile(t, filepath.Join(r.Tree, "big.bin")))
	})

	t.Run("git-lfs-missing", func(t *testing.T) {
		onlyGitConfig(t, "")
		src := t.TempDir()
		gitRun(t, src, "init", "-q")
		gitRun(t, src, "lfs", "install", "--local")
		lfsRepo(t, src)
		// git, and no git-lfs, on PATH.
		bin := t.TempDir()
		gitBin, err := exec.LookPath("git")
		require.NoError(t, err)
		require.NoError(t, os.Symlink(gitBin, filepath.Join(bin, "git")))
		t.Setenv("PATH", bin)
		r := runOnce(t, src, "", false)
		require.Equal(t, event.ResultError, r.Status, "%+v", r)
		require.Equal(t, bench.ReasonSetup, r.Reason)
		require.Equal(t, "bench: "+src+" keeps files in git LFS and git-lfs is not installed: install it (Debian: apt-get install git-lfs)", r.Error)
	})

	t.Run("content-never-fetched", func(t *testing.T) {
		// The filter in the user's config; a clone that skipped the LFS
		// downloads has pointers, and so has the run.
		onlyGitConfig(t, "[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n\tsmudge = git-lfs smudge -- %f\n"+
			"\tprocess = git-lfs filter-process\n\trequired = true\n")
		origin := t.TempDir()
		lfsRepo(t, origin)
		src := filepath.Join(t.TempDir(), "src")
		clone := exec.Command("git", "clone", "-q", "file://"+origin, src)
		clone.Env = append(os.Environ(), "GIT_LFS_SKIP_SMUDGE=1")
		out, err := clone.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, readFile(t, filepath.Join(src, "big.bin")), "git-lfs.github.com/spec", "the source has a pointer")
		t.Setenv("SRC", src)
		r := runOnce(t, src, same, false)
		require.Equal(t, event.ResultSuccess, r.Status, "%+v", r)
		require.True(t, r.Check.Passed, "the run has the source's file: %+v", r.Check)
		require.Equal(t, []string{"out.txt"}, r.Files.Paths)
	})
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// TestPartialCloneTree: a partial clone that has HEAD's files gives runs
// their tree; one that lacks some (a sparse one never fetched them) is
// refused with one line saying how to fetch them, where the checkout left
// them out and the run counted them deleted.
func TestPartialCloneTree(t *testing.T) {
	full := source(t, true)
	require.NoError(t, os.WriteFile(filepath.Join(full, "sub", "keep.txt"), []byte("second\n"), 0o644))
	gitRun(t, full, "commit", "-qam", "second")
	gitRun(t, full, "config", "uploadpack.allowfilter", "true")
	check := `test "$(cat sub/keep.txt)" = second && test "$(git log --format=%s)" = "second
start"`

	t.Run("blob-none", func(t *testing.T) {
		src := filepath.Join(t.TempDir(), "src")
		gitRun(t, full, "clone", "-q", "--filter=blob:none", "file://"+full, src)
		r := runOnce(t, src, check, false)
		require.Equal(t, event.ResultSuccess, r.Status, "%+v", r)
		require.True(t, r.Check.Passed, "%+v", r.Check)
		require.Equal(t, []string{"out.txt"}, r.Files.Paths)
	})

	t.Run("sparse", func(t *testing.T) {
		src := filepath.Join(t.TempDir(), "src")
		gitRun(t, full, "clone", "-q", "--filter=blob:none", "--sparse", "file://"+full, src)
		require.NoFileExists(t, filepath.Join(src, "sub", "keep.txt"))
		r := runOnce(t, src, check, false)
		require.Equal(t, event.ResultError, r.Status, "%+v", r)
		require.Equal(t, bench.ReasonSetup, r.Reason)
		require.Equal(t, "bench: "+src+" lacks 1 object (sub/keep.txt, …) of its HEAD, as a partial clone may: fetch them there first (git -C "+
			src+" archive HEAD >/dev/null), or use a full clone", r.Error)

		// What the line says to do is enough.
		cmd := exec.Command("sh", "-c", "git -C "+src+" archive HEAD >/dev/null")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		r = runOnce(t, src, check, false)
		require.Equal(t, event.ResultSuccess, r.Status, "%+v", r)
		require.True(t, r.Check.Passed, "%+v", r.Check)
		require.Equal(t, []string{"out.txt"}, r.Files.Paths)
		require.NoFileExists(t, filepath.Join(src, "sub", "keep.txt"), "the source's working tree is as it was")
	})
}

// TestKeptTreeStandsAlone: a kept tree's repository has every object it
// needs once the bench ends, so it outlives its source (and the
// repository the source borrows from) being deleted.
func TestKeptTreeStandsAlone(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(t *testing.T, origin string) string // the source, from a repository with two commits
	}{
		{"own-objects", func(t *testing.T, origin string) string { return origin }},
		{"borrowing-source", func(t *testing.T, origin string) string {
			src := filepath.Join(t.TempDir(), "src")
			gitRun(t, origin, "clone", "-q", "--shared", origin, src)
			return src
		}},
		{"shallow", func(t *testing.T, origin string) string {
			src := filepath.Join(t.TempDir(), "src")
			gitRun(t, origin, "clone", "-q", "--depth=1", "file://"+origin, src)
			return src
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			origin := source(t, true)
			gitRun(t, origin, "gc", "-q") // a pack, and a loose commit next
			require.NoError(t, os.WriteFile(filepath.Join(origin, "sub", "keep.txt"), []byte("second\n"), 0o644))
			gitRun(t, origin, "commit", "-qam", "second")
			src := c.make(t, origin)
			history := gitRun(t, src, "log", "--format=%s")

			plan := bench.Plan{Tasks: []bench.Task{{Prompt: "x", Tree: src}}, Agents: []string{"nop"}}
			rep, err := bench.Run(context.Background(), plan, bench.Options{Dir: t.TempDir(), Keep: true,
				Setup: scriptAgent(t, `echo out > out.txt && git add out.txt && git -c user.name=a -c user.email=a@a commit -qm agent`)})
			require.NoError(t, err)
			r := rep.Runs[0]
			require.Equal(t, event.ResultSuccess, r.Status, "%+v", r)

			require.NoError(t, os.RemoveAll(src))
			require.NoError(t, os.RemoveAll(origin))
			gitRun(t, r.Tree, "fsck", "--no-progress", "--no-dangling")
			require.Equal(t, "agent\n"+history, gitRun(t, r.Tree, "log", "--format=%s"))
			require.Equal(t, "second", gitRun(t, r.Tree, "show", "HEAD:sub/keep.txt"))
			require.Empty(t, gitRun(t, r.Tree, "status", "--porcelain"))
			require.NoFileExists(t, filepath.Join(r.Tree, ".git", "objects", "info", "alternates"))
		})
	}
}
