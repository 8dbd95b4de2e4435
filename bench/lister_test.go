package bench_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
)

// TestListerReadsChangedReportsOnly: a Lister lists as Store.List does,
// but reads a report again only once its file changed: serve's page
// listed the store at each request, reading and decoding every report
// (a 50 MB one made each listing take 0.5 to 0.9 s). A file whose bytes
// changed but whose size and time did not is not read again (what shows
// that it was not); one whose time changed is.
func TestListerReadsChangedReportsOnly(t *testing.T) {
	st := bench.Store{Dir: t.TempDir()}
	older, newer := sampleReport(), sampleReport()
	newer.Started = older.Started.Add(time.Hour)
	newer.PlanID = "0123456789abcdef0123456789abcdef"
	id1, err := st.Save(older)
	require.NoError(t, err)
	id2, err := st.Save(newer)
	require.NoError(t, err)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, id := range []string{id1, id2} {
		require.NoError(t, os.Chtimes(filepath.Join(st.Dir, id+".json"), old, old))
	}
	want, err := st.List()
	require.NoError(t, err)
	require.Len(t, want, 2)

	l := &bench.Lister{Store: st}
	got, err := l.List()
	require.NoError(t, err)
	require.Equal(t, want, got, "as Store.List, newest first")

	// The same size and time, other bytes: not read again.
	p := filepath.Join(st.Dir, id1+".json")
	fi, err := os.Stat(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, bytes.Repeat([]byte{'x'}, int(fi.Size())), 0o600))
	require.NoError(t, os.Chtimes(p, old, old))
	got, err = l.List()
	require.NoError(t, err)
	require.Equal(t, want, got, "an unchanged file is not read again")

	// Its time changed: read again, and no longer a report.
	require.NoError(t, os.Chtimes(p, old.Add(time.Minute), old.Add(time.Minute)))
	got, err = l.List()
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, id2, got[0].ID)

	// Removed: gone from the list.
	require.NoError(t, os.Remove(filepath.Join(st.Dir, id2+".json")))
	got, err = l.List()
	require.NoError(t, err)
	require.Empty(t, got)
}
