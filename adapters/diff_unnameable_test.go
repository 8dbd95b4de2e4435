package adapters

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// TestDiffOfUnnameablePath: a path no header can name (the root, a
// newline in it) gets no diff rather than one that does not parse
// (codex FuzzParse/64cf2384075a94ad: a delete of "/").
func TestDiffOfUnnameablePath(t *testing.T) {
	for _, path := range []string{"/", "", "a\nb"} {
		require.Empty(t, Diff(path, Present("x\n"), File{}), "%q", path)
		require.Empty(t, Diff(path, File{}, Present("x\n")), "%q", path)
		require.Empty(t, Diff(path, Present("x\n"), Present("y\n")), "%q", path)
	}
	d := Diff("/tmp/x", Present("x\n"), File{})
	_, err := event.ParsePatch(d)
	require.NoError(t, err, d)
}
