package adapters

import (
	"cmp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// TestDiffOfUnnameablePath: a path no header can name (the root, a
// newline in it) gets no diff rather than one that does not parse
// (codex FuzzParse/64cf2384075a94ad: a delete of "/"), nor one that names
// another file: git apply and event.ParsePatch end a header's name at a
// tab (what follows is diff -u's timestamp), and git drops a CR before
// the newline, so "a\tb" and "x\r" would be read as "a" and "x".
func TestDiffOfUnnameablePath(t *testing.T) {
	for _, path := range []string{"/", "", "a\nb", "a\tb", "x\r", "dir/x\ry"} {
		require.Empty(t, Diff(path, Present("x\n"), File{}), "%q", path)
		require.Empty(t, Diff(path, File{}, Present("x\n")), "%q", path)
		require.Empty(t, Diff(path, Present("x\n"), Present("y\n")), "%q", path)
		_, ok := HeaderName(path)
		require.False(t, ok, "%q", path)
	}
	d := Diff("/tmp/x", Present("x\n"), File{})
	_, err := event.ParsePatch(d)
	require.NoError(t, err, d)
}

// TestDiffOrSkip: a change no header can name is unknown; no change, or
// one a diff shows nothing of (an empty file created), is no diff either
// way.
func TestDiffOrSkip(t *testing.T) {
	d, skipped := DiffOrSkip("a\tb", Present("x\n"), Present("y\n"))
	require.Empty(t, d)
	require.Equal(t, event.DiffSkippedUnknown, skipped)
	for _, c := range [][2]File{{Present("x\n"), Present("x\n")}, {{}, Present("")}, {{}, {}}} {
		d, skipped := DiffOrSkip("a\tb", c[0], c[1])
		require.Empty(t, d)
		require.Empty(t, skipped, "%v", c)
	}
	d, skipped = DiffOrSkip("/w/a.txt", Present("x\n"), Present("y\n"))
	require.Equal(t, Diff("/w/a.txt", Present("x\n"), Present("y\n")), d)
	require.Empty(t, skipped)
}

// TestDiffNamesItsFile: the stream's checker reads back from a diff's
// headers the very name HeaderName gives, whatever the path holds.
func TestDiffNamesItsFile(t *testing.T) {
	for _, path := range []string{"/tmp/x", "x", "dir/with space.txt", "trailing ", " lead", `back\slash`, `"quoted"`,
		"é.txt", "a\x1bb", "a/b/../c", "dev/null"} {
		name, ok := HeaderName(path)
		require.True(t, ok, "%q", path)
		for _, d := range []string{Diff(path, Present("x\n"), Present("y\n")), Diff(path, File{}, Present("y\n")), Diff(path, Present("x\n"), File{})} {
			ps, err := event.ParsePatch(d)
			require.NoError(t, err, d)
			require.Len(t, ps, 1)
			require.Equal(t, name, cmp.Or(ps[0].To, ps[0].From), "%q", path)
		}
	}
}
