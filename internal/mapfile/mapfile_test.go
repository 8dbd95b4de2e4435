package mapfile

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMapReadsTheFileAndReleaseKeepsIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	want := strings.Repeat("0123456789abcdef", 64<<10) // 1 MiB
	require.NoError(t, os.WriteFile(path, []byte(want), 0o600))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	data := Map(f)
	require.Equal(t, want, string(data))
	// Given back, the pages read the same again.
	Release(data, len(data)/2+1)
	Release(data, len(data))
	require.Equal(t, want, string(data))
}

func TestMapRefusesWhatItCannotMap(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	for _, path := range []string{empty, dir} {
		f, err := os.Open(path)
		require.NoError(t, err)
		require.Nil(t, Map(f), path)
		f.Close()
	}
}

// A file shortened after it was mapped faults where the lost part is
// read: with SetPanicOnFault, a panic IsFault recognises, not a crash.
func TestShortenedFileFaultsRecoverably(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat("x", 64<<10)), 0o600))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	data := Map(f)
	require.NotNil(t, data)
	require.NoError(t, os.Truncate(path, 0))
	var v any
	func() {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() { v = recover() }()
		read = data[len(data)-1]
		t.Fatal("read a byte the file no longer has")
	}()
	require.True(t, IsFault(v, data), "%v", v)
	require.False(t, IsFault(v, []byte("elsewhere")))
	require.False(t, IsFault("a panic of another kind", data))
}

// read keeps a read byte, so that the read is made.
var read byte
