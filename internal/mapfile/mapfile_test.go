package mapfile

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestMapReadsTheFileAndReleaseKeepsIt(t *testing.T) {
	want, f := openMiB(t)
	data := Map(f)
	require.Zero(t, residentKiB(t, data))
	// (MADV_POPULATE_READ: Linux 5.14 and later.)
	Prefault(data, 4096, 256<<10+1)
	// The pages from the one holding data[4096] to the one holding data[256
	// KiB], and what the kernel maps with them (the rest of a folio of the
	// page cache's: up to the whole file).
	require.GreaterOrEqual(t, residentKiB(t, data), 256)
	require.Equal(t, want, string(data))
	require.Equal(t, 1024, residentKiB(t, data), "read whole: all its pages are resident")
	Release(data, -1, len(data)/2+1)
	require.Equal(t, 512, residentKiB(t, data), "the first half given back")
	Release(data, len(data)/2+1, len(data)+1)
	require.Zero(t, residentKiB(t, data))
	// Given back, the pages read the same again.
	require.Equal(t, want, string(data))
}

// openMiB writes a file of 1 MiB and opens it.
func openMiB(t *testing.T) (string, *os.File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	want := strings.Repeat("0123456789abcdef", 64<<10)
	require.NoError(t, os.WriteFile(path, []byte(want), 0o600))
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return want, f
}

// residentKiB is how much of the mapping data is resident, from
// /proc/self/smaps.
func residentKiB(t *testing.T, data []byte) int {
	t.Helper()
	smaps, err := os.ReadFile("/proc/self/smaps")
	require.NoError(t, err)
	// The mapping starts on the page that holds data[0].
	at := uintptr(unsafe.Pointer(unsafe.SliceData(data))) &^ uintptr(os.Getpagesize()-1)
	start := fmt.Sprintf("%x-", at)
	in := false
	for _, line := range strings.Split(string(smaps), "\n") {
		if strings.Contains(line, "-") && !strings.HasPrefix(line, " ") && len(strings.Fields(line)) >= 5 {
			in = strings.HasPrefix(line, start)
			continue
		}
		if kib, ok := strings.CutPrefix(line, "Rss:"); in && ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(kib, "kB")))
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no mapping at %s in /proc/self/smaps", start)
	return 0
}

// MapFrom maps what a read from an offset would read, and the pages it
// releases are whole pages within it: not the first, which starts before
// the offset.
func TestMapFromAnOffset(t *testing.T) {
	want, f := openMiB(t)
	data := MapFrom(f, 1000)
	require.Equal(t, want[1000:], string(data))
	require.Equal(t, 1024, residentKiB(t, data))
	Release(data, 0, 5000)
	require.Equal(t, 1024, residentKiB(t, data), "nothing: data[0] and data[5000] are on its first two pages")
	Prefault(data, 0, 1)
	Release(data, 0, len(data))
	require.Equal(t, 4, residentKiB(t, data), "all but the first page, which holds bytes before data")
	require.Equal(t, want[1000:], string(data))
	require.Nil(t, MapFrom(f, int64(len(want))), "nothing left to map")
	page := os.Getpagesize()
	require.Equal(t, want[page:], string(MapFrom(f, int64(page))), "an offset on a page")
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

	// Catching recovers that fault, and only that.
	caught := false
	func() {
		defer Catching(data, func() { caught = true })()
		read = data[len(data)-1]
	}()
	require.True(t, caught)
	require.False(t, debug.SetPanicOnFault(false), "set back as it was")
	require.PanicsWithValue(t, "another", func() {
		defer Catching(data, func() { t.Fatal("another panic taken for a fault") })()
		panic("another")
	})
}

// read keeps a read byte, so that the read is made.
var read byte
