package logger

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadEnds: the first and last lines of a log, each only when whole
// and within the window, whatever lies between.
func TestReadEnds(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 3*endsProbe) // past the probe: the window is widened
	for _, c := range []struct {
		name        string
		log         string
		window      int
		first, last string // "-": none
	}{
		{"empty", "", 100, "-", "-"},
		{"one-line", "a\n", 100, "a", "a"},
		{"lines", "a\nb\nc\n", 100, "a", "c"},
		{"unfinished-last", "a\nb\nc", 100, "a", "-"},
		{"no-newline", "abc", 100, "-", "-"},
		{"empty-lines", "\n\n", 100, "", ""},
		{"line-of-window", "abcd\nef\nwxyz\n", 4, "abcd", "wxyz"},
		{"lines-over-window", "abcde\nef\nvwxyz\n", 4, "-", "-"},
		{"one-line-over-window", "abcde\n", 4, "-", "-"},
		{"long-ends", long + "\n" + strings.Repeat("m\n", 1000) + long + "y\n", 4 * endsProbe, long, long + "y"},
		{"long-ends-over-window", long + "\nm\n" + long + "\n", 2 * endsProbe, "-", "-"},
		{"long-middle", "a\n" + strings.Repeat(long+"\n", 10) + "z\n", 100, "a", "z"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(Path(dir, "run_e", ExtEvents), []byte(c.log), 0o600))
			e, err := ReadEnds(dir, "run_e", c.window)
			require.NoError(t, err)
			require.Equal(t, int64(len(c.log)), e.Size)
			for _, got := range []struct {
				line []byte
				want string
			}{{e.First, c.first}, {e.Last, c.last}} {
				if got.want == "-" {
					require.Nil(t, got.line)
				} else {
					require.NotNil(t, got.line)
					require.Equal(t, got.want, string(got.line))
				}
			}
		})
	}
	t.Run("no-log", func(t *testing.T) {
		t.Parallel()
		_, err := ReadEnds(t.TempDir(), "run_none", 100)
		require.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("fifo", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		require.NoError(t, syscall.Mkfifo(Path(dir, "run_f", ExtEvents), 0o600))
		_, err := ReadEnds(dir, "run_f", 100)
		require.ErrorIs(t, err, ErrNotRegular)
	})
}
