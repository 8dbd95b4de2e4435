package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// A run's tree. Every run works in its own fresh copy of the task's
// starting tree, so agents never see each other's edits:
//
//   - a source that is the top level of a git repository with at least one
//     commit gets a repository of its own checked out at a detached HEAD,
//     the source's: committed files only, local changes of the source are
//     not part of the starting tree (see repoTree);
//   - any other source — a plain directory, a subdirectory of a repository
//     (a task's fixture kept in a project), or none (an empty directory) —
//     is copied as it is on disk, then a throwaway git repository is made
//     in the copy with the starting tree as its one commit.
//
// Either way the tree is a git checkout of a known base commit, so "files
// changed" is one method for both: after the agent ends, `git add -A` in
// the tree and `git diff --cached --numstat BASE` — files the agent
// created, edited, deleted or committed, minus what .gitignore hides.
// Agents see a git repository in both cases, as they would in a project.
type tree struct {
	dir    string // the run's copy
	cwd    string // where the agent and the check run (dir)
	base   string // the starting commit
	gitDir string // a repository kept outside dir (a Harbor workspace), else dir's own
}

// gitArgs puts the tree's separate repository, when it has one, before args.
func (t *tree) gitArgs(args ...string) []string {
	if t.gitDir == "" {
		return args
	}
	return append([]string{"--git-dir=" + t.gitDir, "--work-tree=" + t.dir}, args...)
}

// gitIdentity lets the throwaway commit succeed without a user config.
var gitIdentity = []string{"-c", "user.name=harness bench", "-c", "user.email=bench@harness.invalid",
	"-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append(append([]string{"-C", dir}, gitIdentity...), args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

var unsafeChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })

// treeName names a run's directory after its spec, e.g. 003-claude-sonnet-r2.
func treeName(s Spec) string {
	parts := []string{fmt.Sprintf("%03d", s.Index+1)}
	if s.Task.Name != "" {
		parts = append(parts, s.Task.Name)
	}
	parts = append(parts, s.Agent)
	if s.Model != "" {
		parts = append(parts, s.Model)
	}
	parts = append(parts, "r"+strconv.Itoa(s.Repeat))
	name := unsafeChars().ReplaceAllString(strings.Join(parts, "-"), "_")
	if len(name) > 100 {
		name = name[:100]
	}
	return name
}

// makeTree makes the run's copy of src (an empty tree when src is "")
// under root.
func makeTree(ctx context.Context, src, root string, s Spec) (*tree, error) {
	dir := filepath.Join(root, treeName(s))
	if src != "" && isRepoTop(ctx, src) {
		return repoTree(ctx, src, dir)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	t := &tree{dir: dir, cwd: dir}
	if src != "" {
		if err := copyTree(src, dir, root); err != nil {
			t.remove()
			return nil, fmt.Errorf("bench: copying %s: %w", src, err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "--no-verify", "--allow-empty", "-m", "bench: starting tree"}} {
		if _, err := git(ctx, dir, args...); err != nil {
			t.remove()
			return nil, fmt.Errorf("bench: %w", err)
		}
	}
	base, err := git(ctx, dir, "rev-parse", "HEAD")
	if err != nil {
		t.remove()
		return nil, fmt.Errorf("bench: %w", err)
	}
	t.base = base
	return t, nil
}

// isRepoTop reports whether dir is the top level of a git repository
// that has a commit.
func isRepoTop(ctx context.Context, dir string) bool {
	top, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return false
	}
	a, errA := filepath.EvalSymlinks(top)
	b, errB := filepath.EvalSymlinks(dir)
	if errA != nil || errB != nil || a != b {
		return false
	}
	_, err = git(ctx, dir, "rev-parse", "--verify", "-q", "HEAD")
	return err == nil
}

// repoTree checks src's HEAD out in a new repository at dir. Not a `git
// worktree`, which shares branches, stash and config with the source and
// so with every other run. The new repository borrows the source's
// objects through objects/info/alternates, which git only reads: its own
// commits, refs, stash and config stay in dir, and nothing there can
// change the source. It gets no ref of the source (no branch, tag or
// remote to push to); of the rest, only the shallow list (a shallow
// clone's history stays readable) and info/exclude (files changed still
// leave out what git status leaves out in the source).
func repoTree(ctx context.Context, src, dir string) (*tree, error) {
	base, err := git(ctx, src, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	common, err := git(ctx, src, "rev-parse", "--git-common-dir") // the main repository's, for a linked worktree
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	if !filepath.IsAbs(common) {
		common = filepath.Join(src, common)
	}
	format, err := git(ctx, src, "rev-parse", "--show-object-format") // sha1 objects cannot name sha256 ones
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	t := &tree{dir: dir, cwd: dir, base: base}
	if err := initBorrowing(ctx, dir, common, format); err != nil {
		t.remove()
		return nil, fmt.Errorf("bench: %w", err)
	}
	if _, err := git(ctx, dir, "checkout", "-q", "--detach", base); err != nil {
		t.remove()
		return nil, fmt.Errorf("bench: %w", err)
	}
	return t, nil
}

// initBorrowing makes an empty repository in dir that reads the objects
// (of the given format) of the repository whose git directory is common.
func initBorrowing(ctx context.Context, dir, common, format string) error {
	if _, err := git(ctx, dir, "init", "-q", "--object-format="+format); err != nil {
		return err
	}
	own := filepath.Join(dir, ".git")
	objects, err := filepath.Abs(filepath.Join(common, "objects"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(own, "objects", "info", "alternates"), []byte(objects+"\n"), 0o644); err != nil {
		return err
	}
	for _, f := range []string{"shallow", filepath.Join("info", "exclude")} {
		b, err := os.ReadFile(filepath.Join(common, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(own, f), b, 0o644)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// FilesChanged is the git diff of a run's tree against its starting tree.
type FilesChanged struct {
	Files      int      `json:"files"`
	Insertions int      `json:"insertions"`
	Deletions  int      `json:"deletions"`
	Paths      []string `json:"paths,omitempty"` // relative to the tree's top; binary files count no lines
}

// changes measures what the run changed in its tree.
func (t *tree) changes(ctx context.Context) (*FilesChanged, error) {
	if _, err := git(ctx, t.dir, t.gitArgs("add", "-A")...); err != nil {
		return nil, err
	}
	out, err := git(ctx, t.dir, t.gitArgs("diff", "--cached", "--numstat", "--no-renames", t.base, "--")...)
	if err != nil {
		return nil, err
	}
	fc := &FilesChanged{}
	for line := range strings.Lines(out) {
		f := strings.SplitN(strings.TrimRight(line, "\n"), "\t", 3)
		if len(f) != 3 {
			continue
		}
		ins, _ := strconv.Atoi(f[0]) // "-" for a binary file
		del, _ := strconv.Atoi(f[1])
		fc.Files++
		fc.Insertions += ins
		fc.Deletions += del
		fc.Paths = append(fc.Paths, f[2])
	}
	return fc, nil
}

// remove deletes the tree.
func (t *tree) remove() error {
	return removeAll(t.dir)
}

// removeAll removes dir, making read-only directories writable first
// (tools such as the Go module cache leave them).
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// Bounds of a plain copy: a starting tree bigger than this is most likely
// a mistake (a home directory); a git repository is never copied.
const (
	maxCopyBytes = 1 << 30
	maxCopyFiles = 100_000
)

var errTooBig = errors.New("more than 1 GiB or 100000 files: point --workdir at the project, or make it a git repository (runs then get a checkout of its HEAD)")

// copyTree copies regular files, directories and symlinks of src into
// dst (which exists), keeping modes, skipping skip (the bench's own
// directory when it lies inside src).
func copyTree(src, dst, skip string) error {
	skipAbs, _ := filepath.Abs(skip)
	var size int64
	files := 0
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if abs, _ := filepath.Abs(p); abs == skipAbs {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(target, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			size, files = size+info.Size(), files+1
			if size > maxCopyBytes || files > maxCopyFiles {
				return errTooBig
			}
			return copyFile(p, target, info.Mode().Perm())
		}
		return nil // sockets, devices, pipes: not part of a source tree
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}

func isDir(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", p)
	}
	return nil
}

// runDir returns the directory of the run trees and what removes it.
func runDir(dir string, keep bool) (string, func(), error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "harness-bench-")
		if err != nil {
			return "", nil, fmt.Errorf("bench: %w", err)
		}
		if keep {
			return d, func() {}, nil
		}
		return d, func() { removeAll(d) }, nil
	}
	// A directory the caller named holds one fresh subdirectory per bench,
	// so benches never collide; the named directory itself stays.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("bench: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, fmt.Errorf("bench: %w", err)
	}
	d, err := os.MkdirTemp(abs, "bench-")
	if err != nil {
		return "", nil, fmt.Errorf("bench: %w", err)
	}
	if keep {
		return d, func() {}, nil
	}
	return d, func() { removeAll(d) }, nil
}
