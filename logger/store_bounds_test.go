package logger

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// procBytesRead is how many bytes this process has read (/proc/self/io's
// rchar). Tests that count with it are not parallel.
func procBytesRead(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skip("no /proc/self/io:", err)
	}
	for _, l := range bytes.Split(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte("rchar: ")); ok {
			n, err := strconv.ParseInt(string(v), 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Skip("no rchar in /proc/self/io")
	return 0
}

// sparseMeta makes run's meta a file of size zero bytes (sparse: cheap to
// make, not to read), its modification time an hour ago.
func sparseMeta(t *testing.T, dir, run string, size int64) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	path := Path(dir, run, ExtMeta)
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(size))
	require.NoError(t, f.Close())
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(path, old, old))
}

// TestMetaOverCapNotRead: a meta over maxMetaBytes (a 3 GB one took
// serve's memory to 13 GB, and every listing with it) reads as a
// malformed one, status unknown, without being read, by Load, List and
// an Index; one just under the cap still loads.
func TestMetaOverCapNotRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	const run = "run_01HUGEMETA0000000000000000"
	sparseMeta(t, dir, run, maxMetaBytes+4<<20)
	x := NewIndex(dir)
	for name, load := range map[string]func() (Meta, error){
		"Load": func() (Meta, error) { return Load(dir, run) },
		"List": func() (Meta, error) {
			ms, err := List(dir)
			require.Len(t, ms, 1)
			return ms[0], err
		},
		"Index": func() (Meta, error) {
			ms, err := x.List()
			require.Len(t, ms, 1)
			return ms[0], err
		},
	} {
		before := procBytesRead(t)
		m, err := load()
		read := procBytesRead(t) - before
		require.NoError(t, err, name)
		require.Equal(t, "unknown", m.Status, name)
		require.Equal(t, run, m.Run, name)
		require.Less(t, read, int64(1<<20), "%s read %d bytes of the meta", name, read)
	}

	// A meta as big as harness could write one still loads: an argv as
	// long as execve takes (6 MiB), with a quote to escape in each KiB.
	const big = "run_01BIGMETA00000000000000000"
	argv := make([]string, 6<<20/(128<<10))
	for i := range argv {
		argv[i] = strings.Repeat(strings.Repeat("a", 1023)+`"`, 128)[:128<<10-1]
	}
	data, err := json.Marshal(Meta{Run: big, Agent: "claude", Status: "success", Argv: argv})
	require.NoError(t, err)
	require.Less(t, len(data), maxMetaBytes/2)
	require.NoError(t, os.WriteFile(Path(dir, big, ExtMeta), data, 0o600))
	m, err := Load(dir, big)
	require.NoError(t, err)
	require.Equal(t, "success", m.Status)
	require.Equal(t, argv, m.Argv)
}

// TestIndexRemembersBadMeta: a malformed meta was read again by every
// listing (under the Index's lock), since it is never final; it is now
// read again only once it changed, and then read as what it became.
func TestIndexRemembersBadMeta(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	const run = "run_01BADMETA00000000000000000"
	const size = 4 << 20
	sparseMeta(t, dir, run, size)
	x := NewIndex(dir)
	list := func() (Meta, int64) {
		t.Helper()
		before := procBytesRead(t)
		ms, err := x.List()
		read := procBytesRead(t) - before
		require.NoError(t, err)
		require.Len(t, ms, 1)
		return ms[0], read
	}
	m, read := list()
	require.Equal(t, "unknown", m.Status)
	require.GreaterOrEqual(t, read, int64(size), "the first listing reads it")
	for range 3 {
		m2, read := list()
		require.Equal(t, m, m2)
		require.Less(t, read, int64(size/4), "a listing read the unchanged bad meta again")
	}

	// Changed (and valid now): read again.
	writeMetaFile(t, dir, Meta{Run: run, Agent: "codex", Status: "success", Start: t0, End: t0.Add(time.Minute)})
	m, _ = list()
	require.Equal(t, "success", m.Status)
	require.Equal(t, "codex", m.Agent)

	// A bad meta made good a moment later is read as good.
	const run2 = "run_01BADMETA00000000000000002"
	require.NoError(t, os.WriteFile(Path(dir, run2, ExtMeta), []byte(`{"run":`), 0o600))
	ms, err := x.List()
	require.NoError(t, err)
	require.Len(t, ms, 2)
	require.NoError(t, os.WriteFile(Path(dir, run2, ExtMeta), []byte(`{"run":"`+run2+`","agent":"gemini","status":"error"}`), 0o600))
	ms, err = x.List()
	require.NoError(t, err)
	got := map[string]string{}
	for _, m := range ms {
		got[m.Run] = m.Agent
	}
	require.Equal(t, map[string]string{run: "codex", run2: "gemini"}, got)
}
