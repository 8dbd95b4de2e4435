package logger

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAmbiguousPrefixErrorIsShort: a prefix that many runs share names
// at most maxAmbiguousShown of them and counts the rest: the error was
// every matching id, hundreds of kilobytes in one line for a short
// prefix of a large store, which serve sends to its client.
func TestAmbiguousPrefixErrorIsShort(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const runs = 50
	for i := range runs {
		name := fmt.Sprintf("run_01X%03d", i)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+ExtEvents), []byte("{}\n"), 0o600))
	}
	_, err := Resolve(dir, "run_01X")
	require.ErrorIs(t, err, ErrAmbiguous)
	msg := err.Error()
	require.Equal(t, maxAmbiguousShown, strings.Count(msg, "run_01X0"), msg)
	require.Contains(t, msg, `"run_01X" matches run_01X000, run_01X001,`)
	require.True(t, strings.HasSuffix(msg, fmt.Sprintf(" and %d more", runs-maxAmbiguousShown)), msg)

	// Up to maxAmbiguousShown, every match is named, as before.
	for _, name := range []string{"run_01Y1", "run_01Y2", "run_01Y3"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+ExtEvents), []byte("{}\n"), 0o600))
	}
	_, err = Resolve(dir, "run_01Y")
	require.ErrorIs(t, err, ErrAmbiguous)
	require.True(t, strings.HasSuffix(err.Error(), `"run_01Y" matches run_01Y1, run_01Y2, run_01Y3`), err.Error())
}
