package logger

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestListCheckedSaysWhichMetasAreMadeUp: List rebuilt a run whose meta
// does not decode from its event log, with nothing to tell it from the
// others. ListChecked lists the same metas as List, and names that run
// with LoadChecked's reason; a run whose meta is intact is not named.
func TestListCheckedSaysWhichMetasAreMadeUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t0 := time.Unix(1000, 0)
	for _, id := range []string{"run_01A", "run_01B"} {
		writeRun(t, dir, id, t0, t0, `{"v":1,"type":"session_start","run":"`+id+`","seq":1,"ts":1000,"agent":"claude"}`)
	}
	require.NoError(t, os.WriteFile(Path(dir, "run_01B", ExtMeta), []byte(`{"run": garbage`), 0o600))
	metas, whys, err := ListChecked(dir)
	require.NoError(t, err)
	listed, err := List(dir)
	require.NoError(t, err)
	require.Equal(t, listed, metas)
	require.Len(t, metas, 2)
	require.Len(t, whys, 1)
	require.ErrorIs(t, whys["run_01B"], ErrMetaMalformed)
	require.Equal(t, Path(dir, "run_01B", ExtMeta), whys["run_01B"].Path)
}
