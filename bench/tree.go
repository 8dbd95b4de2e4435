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
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agentharness/harness/internal/privtmp"
	"github.com/agentharness/harness/internal/regfile"
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
		return "", fmt.Errorf("git %s: %w: %s", command(args), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// command names the git command of args in an error: the first word
// after git's options (-c takes a value).
func command(args []string) string {
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-c":
			i++
		case !strings.HasPrefix(args[i], "-"):
			return args[i]
		}
	}
	return args[0]
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
// clone's history stays readable), info/exclude (files changed still
// leave out what git status leaves out in the source) and the git LFS
// settings (see lfsConfig).
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
	if err := initBorrowing(ctx, src, dir, common, format); err != nil {
		t.remove()
		return nil, fmt.Errorf("bench: %w", err)
	}
	if err := checkObjects(ctx, src, dir, base); err != nil {
		t.remove()
		return nil, err
	}
	// git-lfs takes a file's content from the source's LFS store, which it
	// finds through the alternates; a file whose content the source never
	// fetched stays the pointer the source's own checkout shows, where
	// git-lfs would fail the checkout for want of a server to fetch from.
	if _, err := git(ctx, dir, "-c", "lfs.skipdownloaderrors=true", "checkout", "-q", "--detach", base); err != nil {
		if _, missing := exec.LookPath("git-lfs"); missing != nil && isLFS(ctx, dir) {
			err = fmt.Errorf("%s keeps files in git LFS and git-lfs is not installed: install it (Debian: apt-get install git-lfs)", src)
		}
		t.remove()
		return nil, fmt.Errorf("bench: %w", err)
	}
	return t, nil
}

// initBorrowing makes an empty repository in dir that reads the objects
// (of the given format) of src, whose git directory is common.
func initBorrowing(ctx context.Context, src, dir, common, format string) error {
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
	return copyConfig(ctx, src, dir, lfsConfig)
}

// lfsConfig matches the settings that decide what git LFS puts in a
// checkout: the filter, wherever the source's git finds it (its own
// config, the user's, the system's), and the paths it leaves as pointers.
// The run's repository gets them in its own config, so its checkout is the
// source's, and an agent's git (with a HOME of its own) and files changed
// see LFS files as the pointers git stores, not as changed files.
const lfsConfig = `^(filter\.lfs\.|lfs\.fetch(in|ex)clude$)`

// copyConfig sets in dir's repository the settings src's git sees whose
// names match the regular expression re.
func copyConfig(ctx context.Context, src, dir, re string) error {
	out, err := git(ctx, src, "config", "-z", "--get-regexp", re)
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == 1 {
		return nil // none set
	}
	if err != nil {
		return err
	}
	for _, kv := range strings.Split(out, "\x00") {
		key, value, hasValue := strings.Cut(kv, "\n")
		if !hasValue {
			// A key with no value ("[filter \"lfs\"] required") is true
			// to git; written with an empty value it would be false.
			value = "true"
		}
		if key != "" {
			if _, err := git(ctx, dir, "config", "--add", key, value); err != nil {
				return err
			}
		}
	}
	return nil
}

// isLFS reports whether git in dir hands files to git-lfs (filter.lfs).
func isLFS(ctx context.Context, dir string) bool {
	v, err := git(ctx, dir, "config", "filter.lfs.process")
	if err != nil {
		v, err = git(ctx, dir, "config", "filter.lfs.smudge")
	}
	return err == nil && v != ""
}

// checkObjects makes sure that every object of base's tree can be read,
// before the checkout, which leaves out a file whose content it cannot
// read and still succeeds: the run would start without it and count it
// deleted by the agent. Only a partial clone lacks such objects (one
// made with --sparse or --no-checkout has not fetched the files it did
// not check out), and the run has no remote to fetch them from: the
// source must. git archive reads every file of HEAD, so fetches them in
// one go, and leaves the source's working tree as it is.
func checkObjects(ctx context.Context, src, dir, base string) error {
	out, err := git(ctx, dir, "rev-list", "--objects", "--missing=print", base+"^{tree}")
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	var missing []string
	for line := range strings.Lines(out) {
		if oid, ok := strings.CutPrefix(strings.TrimSpace(line), "?"); ok {
			missing = append(missing, oid)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	what := fmt.Sprintf("%d objects", len(missing))
	if len(missing) == 1 {
		what = "1 object"
	}
	if paths, err := git(ctx, dir, "ls-tree", "-r", "-t", "--full-tree", base); err == nil {
		for line := range strings.Lines(paths) {
			if info, path, ok := strings.Cut(strings.TrimRight(line, "\n"), "\t"); ok && strings.HasSuffix(info, " "+missing[0]) {
				what += " (" + path + ", …)"
				break
			}
		}
	}
	return fmt.Errorf("bench: %s lacks %s of its HEAD, as a partial clone may: fetch them there first (git -C %s archive HEAD >/dev/null), or use a full clone", src, what, src)
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
	return privtmp.RemoveAll(t.dir)
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

// copyFile copies the regular file src to a new file dst. A file that
// became a FIFO or a device since it was looked at is refused, not
// opened (an open of a FIFO waits for a writer).
func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := regfile.Open(src)
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

// The directories a bench makes in the host's temporary directory, each
// kind with a prefix of its own that starts no other's names (nor the
// harness-bench- of earlier harnesses, whose runs swept every directory
// so named that they could lock; sweepLegacy takes those): a sweep of
// stale directories (privtmp.Make) takes only those of its own prefix.
const (
	// runTmpPrefix names a run's own temporary directory (runTmp):
	// locked while the run lasts, removed after it, swept once stale.
	runTmpPrefix = "harness-benchtmp-"
	// runsPrefix names a bench's directory of run trees: locked while
	// the bench lives, removed at its end, swept once stale (a bench
	// killed with SIGKILL left it).
	runsPrefix = "harness-benchrun-"
	// keptPrefix names it under --keep: never locked, never swept, it
	// stays, as does every kept tree of a bench killed before its end.
	keptPrefix = "harness-benchkeep-"
)

// runDir returns the directory of the run trees and what removes it, or,
// when they are kept, makes them stand alone (standAlone).
func runDir(dir string, keep bool) (string, func(), error) {
	// Once a bench, whatever its --dir: runTmp's TMPDIRs are there too.
	sweepLegacy(os.TempDir())
	if dir == "" && keep {
		d, err := os.MkdirTemp("", keptPrefix)
		if err != nil {
			return "", nil, fmt.Errorf("bench: %w", err)
		}
		return d, func() { standAloneAll(d) }, nil
	}
	if dir == "" {
		d, err := privtmp.Make(os.TempDir(), runsPrefix)
		if err != nil {
			return "", nil, fmt.Errorf("bench: %w", err)
		}
		return d.Path, func() { d.Remove() }, nil
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
		return d, func() { standAloneAll(d) }, nil
	}
	return d, func() { privtmp.RemoveAll(d) }, nil
}

// standAloneAll makes every run tree in dir that borrows objects stand
// alone. One that cannot (a full disk) keeps borrowing: it works as long
// as its source does.
func standAloneAll(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		objects := filepath.Join(dir, e.Name(), ".git", "objects")
		if _, err := os.Stat(filepath.Join(objects, "info", "alternates")); err == nil {
			standAlone(objects)
		}
	}
}

// standAlone gives a kept tree's repository (its objects directory) the
// objects it borrows, so that it outlives a source gc'd, moved or
// deleted: every object file of the directories it borrows from (and
// of those they borrow from) is hard-linked in, or copied where it cannot
// be (another file system), then the alternates file goes. Links cost
// neither time nor space, and git never writes an object file again, so
// the source's files stay as they are. Packs go before their indexes,
// and a copy is renamed into place whole: until the end the repository
// reads every object either way, and a failure removes what was added.
func standAlone(objects string) error {
	froms, err := borrowed(objects, 0)
	if err != nil {
		return err
	}
	var added []string
	for _, from := range froms {
		if err = linkObjects(from, objects, &added); err != nil {
			break
		}
	}
	if err == nil {
		err = os.Remove(filepath.Join(objects, "info", "alternates"))
	}
	if err != nil {
		for _, p := range added {
			os.Remove(p)
		}
	}
	return err
}

// borrowed lists the object directories that objects reads through its
// alternates file, and those they read in turn (git follows five levels).
func borrowed(objects string, depth int) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(objects, "info", "alternates"))
	if errors.Is(err, fs.ErrNotExist) || depth > 5 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var dirs []string
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(objects, line)
		}
		more, err := borrowed(line, depth+1)
		if err != nil {
			return nil, err
		}
		dirs = append(append(dirs, line), more...)
	}
	return dirs, nil
}

// linkObjects links or copies the object files of the objects directory
// from into to — loose objects and packs; not info/ (alternates, commit
// graph: optional) nor git's temporary files and directories (a push's
// quarantine) — recording what it added.
// A file already there (the same name is the same content) is left. A
// file gone since it was listed (the source repacking) fails it.
func linkObjects(from, to string, added *[]string) error {
	var files []string
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case p == filepath.Join(from, "info") || strings.HasPrefix(d.Name(), "tmp_"):
			if d.IsDir() {
				return filepath.SkipDir
			}
		case !d.IsDir():
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Indexes last: git sees a pack by its index.
	isIdx := func(p string) int {
		if strings.HasSuffix(p, ".idx") {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(files, func(a, b string) int { return isIdx(a) - isIdx(b) })
	for _, p := range files {
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := linkOrCopy(p, dst); err != nil {
			return err
		}
		*added = append(*added, dst)
	}
	return nil
}

// hardLink is os.Link, but where a test makes every link fail.
var hardLink = os.Link

// linkOrCopy hard-links src at dst, else copies it there through a
// temporary file (git's own prefix, which git ignores).
func linkOrCopy(src, dst string) error {
	if hardLink(src, dst) == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	return regfile.Replace(dst, info.Mode().Perm(), func(f *os.File) error {
		_, err := io.Copy(f, in)
		return err
	}, regfile.TempPattern("tmp_obj_"))
}
