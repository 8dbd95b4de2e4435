package event

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fileCase is a file before and after a change; nil is a file that does
// not exist.
type fileCase struct {
	name          string
	before, after *string
}

func str(s string) *string { return &s }

func fileCases() []fileCase {
	cases := []fileCase{
		{"edit-middle", str("a\nb\nc\nd\ne\nf\ng\nh\n"), str("a\nb\nc\nD\ne\nf\ng\nh\n")},
		{"two-hunks", str("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n"), str("1\nX\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\nY\nZ\n15\n")},
		{"create", nil, str("hello\nworld\n")},
		{"create-no-newline", nil, str("hello\nworld")},
		{"remove", str("bye\nnow\n"), nil},
		{"remove-no-newline", str("bye"), nil},
		{"empty-it", str("x\ny\n"), str("")},
		{"fill-empty", str(""), str("x\n")},
		{"add-newline-at-end", str("a\nb"), str("a\nb\n")},
		{"drop-newline-at-end", str("a\nb\n"), str("a\nb")},
		{"append", str("a\n"), str("a\nb\nc\n")},
		{"prepend", str("a\n"), str("z\na\n")},
		{"replace-all", str("a\nb\n"), str("c\n")},
		{"blank-lines", str("\n\n\n"), str("\nx\n\n\n")},
	}
	r := rand.New(rand.NewPCG(13, 1))
	for n := range 24 {
		var lines []string
		for range r.IntN(30) {
			lines = append(lines, fmt.Sprintf("l%d", r.IntN(6)))
		}
		before := strings.Join(lines, "\n")
		if r.IntN(4) > 0 && before != "" {
			before += "\n"
		}
		var out []string
		for _, l := range lines {
			switch r.IntN(8) {
			case 0:
			case 1:
				out = append(out, l, fmt.Sprintf("n%d", r.IntN(6)))
			case 2:
				out = append(out, "changed")
			default:
				out = append(out, l)
			}
		}
		after := strings.Join(out, "\n")
		if r.IntN(4) > 0 && after != "" {
			after += "\n"
		}
		cases = append(cases, fileCase{fmt.Sprintf("random-%d", n), &before, &after})
	}
	return cases
}

// unifiedDiff makes the diff of c with GNU diff, context lines ctx.
func unifiedDiff(t *testing.T, dir string, c fileCase, ctx int) string {
	t.Helper()
	from, to := "a/f", "b/f"
	args := []string{fmt.Sprintf("-U%d", ctx), "-N"}
	bpath, apath := filepath.Join(dir, "missing-before"), filepath.Join(dir, "missing-after")
	if c.before == nil {
		from = "/dev/null"
	} else {
		bpath = filepath.Join(dir, "before")
		require.NoError(t, os.WriteFile(bpath, []byte(*c.before), 0o644))
	}
	if c.after == nil {
		to = "/dev/null"
	} else {
		apath = filepath.Join(dir, "after")
		require.NoError(t, os.WriteFile(apath, []byte(*c.after), 0o644))
	}
	args = append(args, "--label", from, "--label", to, bpath, apath)
	out, err := exec.Command("diff", args...).Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		require.Equal(t, *c.before, *c.after, "diff %v: %v", args, err)
	}
	return string(out)
}

// gitApply applies diff with git apply to f holding before (absent when
// nil) and returns f after, nil when git removed it; ok is false when git
// refused the diff.
func gitApply(t *testing.T, before *string, diff string, ctx int) (after *string, ok bool) {
	t.Helper()
	dir := t.TempDir()
	if before != nil {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte(*before), 0o644))
	}
	args := []string{"apply"}
	if ctx == 0 {
		args = append(args, "--unidiff-zero")
	}
	cmd := exec.Command("git", append(args, "-")...)
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(diff)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("git apply: %s", out)
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(dir, "f"))
	if os.IsNotExist(err) {
		return nil, true
	}
	require.NoError(t, err)
	return str(string(b)), true
}

func apply(diff string, before *string) (*string, error) {
	ps, err := ParsePatch(diff)
	if err != nil {
		return nil, err
	}
	if len(ps) != 1 {
		return nil, fmt.Errorf("%d files", len(ps))
	}
	text, exists, err := ApplyPatch(ps[0], deref(before), before != nil)
	if err != nil || !exists {
		return nil, err
	}
	return &text, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestApplyPatchAgreesWithGitApply: on real diffs (GNU diff, with 3, 1 and
// 0 lines of context) the applier gives what git apply gives, and that is
// the file after.
func TestApplyPatchAgreesWithGitApply(t *testing.T) {
	t.Parallel()
	for _, c := range fileCases() {
		for _, ctx := range []int{3, 1, 0} {
			t.Run(fmt.Sprintf("%s/U%d", c.name, ctx), func(t *testing.T) {
				diff := unifiedDiff(t, t.TempDir(), c, ctx)
				if diff == "" {
					return // nothing changed
				}
				want, ok := gitApply(t, c.before, diff, ctx)
				require.True(t, ok, "git apply refused a real diff:\n%s", diff)
				require.Equal(t, c.after, want, "git apply")
				got, err := apply(diff, c.before)
				require.NoError(t, err, "%s", diff)
				require.Equal(t, want, got)
			})
		}
	}
}

// TestApplyPatchRefusesWhatGitRefuses: a diff changed in one line's text,
// or applied to the wrong file, is refused by both.
func TestApplyPatchRefusesWhatGitRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range fileCases() {
		if c.before == nil || c.after == nil || *c.before == "" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			diff := unifiedDiff(t, t.TempDir(), c, 3)
			if diff == "" {
				return
			}
			// Another file than the one the diff was made from.
			other := str("zzz\n" + *c.before)
			if strings.Contains(diff, "@@ -1,") || strings.Contains(diff, "@@ -1 ") {
				_, gitOK := gitApply(t, other, diff, 3)
				_, err := apply(diff, other)
				require.False(t, gitOK)
				require.Error(t, err)
			}
			// A context or removed line that says something else.
			lines := strings.SplitAfter(diff, "\n")
			for i, l := range lines {
				if i > 2 && (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "-")) {
					lines[i] = l[:1] + "mutated" + l[1:]
					break
				}
			}
			bad := strings.Join(lines, "")
			if bad == diff {
				return
			}
			_, gitOK := gitApply(t, c.before, bad, 3)
			_, err := apply(bad, c.before)
			require.False(t, gitOK, "%s", bad)
			require.Error(t, err, "%s", bad)
		})
	}
}

func TestApplyPatchIsExact(t *testing.T) {
	t.Parallel()
	before := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	good := "--- a/f\n+++ b/f\n@@ -4,3 +4,3 @@\n d\n-e\n+E\n f\n"
	got, err := apply(good, &before)
	require.NoError(t, err)
	require.Equal(t, "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\n", *got)
	for name, diff := range map[string]string{
		// git apply would find the hunk one line off; an exact diff names its line.
		"offset":             "--- a/f\n+++ b/f\n@@ -5,3 +5,3 @@\n d\n-e\n+E\n f\n",
		"new-start":          "--- a/f\n+++ b/f\n@@ -4,3 +5,3 @@\n d\n-e\n+E\n f\n",
		"short-hunk":         "--- a/f\n+++ b/f\n@@ -4,4 +4,3 @@\n d\n-e\n+E\n f\n",
		"long-hunk":          "--- a/f\n+++ b/f\n@@ -4,2 +4,2 @@\n d\n-e\n+E\n f\n",
		"false-no-newline":   "--- a/f\n+++ b/f\n@@ -4,3 +4,3 @@\n d\n-e\n+E\n f\n\\ No newline at end of file\n",
		"create-existing":    "--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+x\n",
		"remove-partly":      "--- a/f\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n",
		"no-header":          "@@ -4,3 +4,3 @@\n d\n-e\n+E\n f\n",
		"garbage":            "hello\n",
		"preamble-only":      "Index: f\n===\n",
		"no-hunk":            "--- a/f\n+++ b/f\n",
		"cut-inside-a-line":  "--- a/f\n+++ b/f\n@@ -4,3 +4,3 @@\n d\n-e\n+E\n f",
		"bad-header-numbers": "--- a/f\n+++ b/f\n@@ -x,3 +4,3 @@\n d\n-e\n+E\n f\n",
	} {
		_, err := apply(diff, &before)
		require.Error(t, err, name)
	}
}

// TestApplyPatchMultiFile: a change set of several files, with git's
// extended headers.
func TestApplyPatchMultiFile(t *testing.T) {
	t.Parallel()
	diff := "Index: x\n===================================================================\ndiff --git a/x b/x\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+new\n" +
		"diff --git a/y b/y\ndeleted file mode 100644\n--- a/y\n+++ /dev/null\n@@ -1 +0,0 @@\n-old\n"
	ps, err := ParsePatch(diff)
	require.NoError(t, err)
	require.Len(t, ps, 2)
	require.Equal(t, FilePatch{From: "", To: "x", Hunks: []Hunk{{0, 0, 1, 1, []string{"+new\n"}}}}, ps[0])
	text, exists, err := ApplyPatch(ps[1], "old\n", true)
	require.NoError(t, err)
	require.False(t, exists)
	require.Empty(t, text)
}

func FuzzParseApplyPatch(f *testing.F) {
	f.Add("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n", "a\nb\n")
	f.Add("--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n", "")
	f.Add("--- a/f\n+++ b/f\n@@ -2,0 +3 @@\n+x\n@@ -1 +1 @@\n-a\n", "a\nb\n")
	f.Fuzz(func(t *testing.T, diff, before string) {
		ps, err := ParsePatch(diff)
		if err != nil {
			return
		}
		for _, p := range ps {
			_, _, _ = ApplyPatch(p, before, true)
			_, _ = applyPartial(p, partialFile{0: "a\n"})
		}
	})
}

// TestHunkHeaderStartsWithAtAt: ParseHunkHeader reads a header only
// where ParsePatch finds a hunk, at a line starting "@@ ". It read
// "0 -2,2 +2,3 @@" (fields split on spaces, the first never checked), so
// codex passed on a diff the stream's checker found no hunk in.
func TestHunkHeaderStartsWithAtAt(t *testing.T) {
	for _, l := range []string{"0 -2,2 +2,3 @@\n", "@@\t-2,2 +2,3 @@\n", "x@@ -1 +1 @@\n", "-2,2 +2,3 @@\n"} {
		_, err := ParseHunkHeader(l)
		require.Error(t, err, "%q", l)
	}
	for l, want := range map[string][4]int{
		"@@ -2,2 +2,3 @@\n":              {2, 2, 2, 3},
		"@@  -2,2\t+2,3 @@ func f() {\n": {2, 2, 2, 3},
		"@@ -1 +1 @@":                    {1, 1, 1, 1},
	} {
		h, err := ParseHunkHeader(l)
		require.NoError(t, err, "%q", l)
		require.Equal(t, want, [4]int{h.OldStart, h.OldCount, h.NewStart, h.NewCount}, "%q", l)
	}
}
