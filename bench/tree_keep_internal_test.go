package bench

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStandAloneCopies: where objects cannot be hard-linked (the run
// trees on another file system than the source), a kept tree gets copies,
// whole, and stands alone all the same.
func TestStandAloneCopies(t *testing.T) {
	hardLink = func(string, string) error { return errors.New("cross-device link") }
	t.Cleanup(func() { hardLink = os.Link })
	src := t.TempDir()
	sh := func(dir, script string) string {
		t.Helper()
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.TrimSpace(string(out))
	}
	g := "git -c user.name=t -c user.email=t@t -c commit.gpgsign=false"
	sh(src, "git init -q && echo one > a && git add a && "+g+" commit -qm one && git gc -q && echo two > a && "+g+" commit -qam two")
	tr, err := repoTree(context.Background(), src, filepath.Join(t.TempDir(), "run"))
	require.NoError(t, err)

	objects := filepath.Join(tr.dir, ".git", "objects")
	require.NoError(t, standAlone(objects))
	require.NoError(t, os.RemoveAll(src))
	require.NoFileExists(t, filepath.Join(objects, "info", "alternates"))
	require.Equal(t, "two\none", sh(tr.dir, "git fsck --no-progress --no-dangling && git log --format=%s"))
	require.Empty(t, sh(tr.dir, "find .git/objects -name 'tmp_*'"), "no temporary file is left")
}

// TestCopyConfigValueless: a key with no value in the source's config
// ("[filter \"lfs\"] required") is true to git, and stays true in the
// run's repository; written with an empty value it read false.
func TestCopyConfigValueless(t *testing.T) {
	ctx := context.Background()
	src, dst := t.TempDir(), t.TempDir()
	for _, dir := range []string{src, dst} {
		_, err := git(ctx, dir, "init", "-q")
		require.NoError(t, err)
	}
	f, err := os.OpenFile(filepath.Join(src, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("[filter \"lfs\"]\n\trequired\n\tsmudge = git-lfs smudge -- %f\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, copyConfig(ctx, src, dst, `^filter\.lfs\.`))
	got, err := git(ctx, dst, "config", "--bool", "filter.lfs.required")
	require.NoError(t, err)
	require.Equal(t, "true", strings.TrimSpace(got))
	got, err = git(ctx, dst, "config", "filter.lfs.smudge")
	require.NoError(t, err)
	require.Equal(t, "git-lfs smudge -- %f", strings.TrimSpace(got))
}
