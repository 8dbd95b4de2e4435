package bench_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/regfile"
)

func TestStore(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	require.Equal(t, filepath.Join(data, "harness", "bench"), bench.StoreDir())

	none, err := bench.Store{Dir: bench.StoreDir()}.List()
	require.NoError(t, err)
	require.Empty(t, none, "no store yet is no report")

	older := sampleReport()
	older.PlanID = "0123456789abcdef0123456789abcdef"
	id1, err := bench.SaveReport(older)
	require.NoError(t, err)
	require.Equal(t, "20260102T030405.000Z-0123456789ab", id1)
	require.Equal(t, id1, older.ID)

	same := sampleReport()
	same.PlanID = older.PlanID
	id2, err := bench.SaveReport(same)
	require.NoError(t, err)
	require.Equal(t, id1+"-2", id2, "an id already taken gets a suffix")

	newer := sampleReport()
	newer.Started = newer.Started.Add(time.Hour)
	newer.Shard = &bench.Shard{Index: 1, Count: 3}
	id3, err := bench.SaveReport(newer)
	require.NoError(t, err)
	require.Equal(t, "20260102T040405.000Z-s1of3", id3)

	st, err := os.Stat(bench.StoreDir())
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	st, err = os.Stat(filepath.Join(bench.StoreDir(), id1+".json"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	require.NoError(t, os.WriteFile(filepath.Join(bench.StoreDir(), "junk.json"), []byte("{"), 0o600))

	list, err := bench.Store{Dir: bench.StoreDir()}.List()
	require.NoError(t, err)
	require.Len(t, list, 3, "the file that is no report is left out")
	require.Equal(t, id3, list[0].ID, "newest first")
	require.Equal(t, []string{"claude", "codex"}, list[0].Agents)
	require.Equal(t, []string{"claude · sonnet", "codex"}, list[0].Groups, "serve lists the groups' labels")
	require.Equal(t, []string{"add-file"}, list[0].Tasks)
	require.Equal(t, filepath.Join(bench.StoreDir(), id3+".json"), list[0].Path)
	require.Equal(t, len(sampleRuns()), list[0].Runs)

	back, err := bench.LoadReport(id1)
	require.NoError(t, err)
	require.Equal(t, *older, *back)

	for _, bad := range []string{"../x", "a/b", "", ".hidden", "missing"} {
		_, err := bench.LoadReport(bad)
		require.Error(t, err, bad)
	}
}

// TestReadReportReadsOnlyARegularFile: ReadReport reads a report file as
// the store reads one: a regular file of at most the store's cap. Before,
// it read any path whole (os.ReadFile): a device such as /dev/zero grew
// its memory without end, and a FIFO held it until a writer closed it.
func TestReadReportReadsOnlyARegularFile(t *testing.T) {
	_, err := bench.ReadReport("/dev/null")
	require.ErrorIs(t, err, bench.ErrNotReport)
	require.ErrorIs(t, err, regfile.ErrNotRegular)
	require.EqualError(t, err, "bench: /dev/null: not a bench JSON report: not a regular file (a device)")

	path := filepath.Join(t.TempDir(), "r.json")
	b, err := json.Marshal(sampleReport())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o600))
	r, err := bench.ReadReport(path)
	require.NoError(t, err)
	require.Equal(t, sampleReport().Runs, r.Runs)
}
