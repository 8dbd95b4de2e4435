package logger

import (
	"io/fs"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLoadCheckedSaysWhyTheMetaIsMadeUp: Load reads a damaged meta as a
// missing one and rebuilds it from the event log, so that readers showed
// the rebuilt one as the run's with nothing said. LoadChecked says why:
// the file is missing, not a regular file, or malformed (garbled, a field
// of the wrong type, another run's), and still returns the rebuilt meta.
func TestLoadCheckedSaysWhyTheMetaIsMadeUp(t *testing.T) {
	t.Parallel()
	ss := `{"v":1,"type":"session_start","run":"run_01M","seq":1,"ts":1000,"agent":"claude"}`
	for _, c := range []struct {
		name string
		meta func(path string) error // nil: the meta Close wrote
		want error                   // nil: the file's meta
	}{
		{"intact", nil, nil},
		{"missing", os.Remove, fs.ErrNotExist},
		{"garbled", func(p string) error { return os.WriteFile(p, []byte(`{"run": garbage`), 0o600) }, ErrMetaMalformed},
		{"wrong-type", func(p string) error {
			return os.WriteFile(p, []byte(`{"run":"run_01M","agent":"claude","start":12345}`), 0o600)
		}, ErrMetaMalformed},
		{"another-run", func(p string) error { return os.WriteFile(p, []byte(`{"run":"run_01X","agent":"claude"}`), 0o600) }, ErrMetaMalformed},
		{"directory", func(p string) error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Mkdir(p, 0o700)
		}, ErrNotRegular},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeRun(t, dir, "run_01M", t0, t0, ss)
			path := Path(dir, "run_01M", ExtMeta)
			if c.meta != nil {
				require.NoError(t, c.meta(path))
			}
			m, why, err := LoadChecked(dir, "run_01M")
			require.NoError(t, err)
			require.Equal(t, "claude", m.Agent)
			require.Equal(t, "run_01M", m.Run)
			if c.want == nil {
				require.Nil(t, why)
				require.Equal(t, "success", m.Status)
				return
			}
			require.NotNil(t, why)
			require.ErrorIs(t, why, c.want)
			require.Equal(t, path, why.Path)
			require.Equal(t, "unknown", m.Status) // made up: the log has no result
			loaded, err := Load(dir, "run_01M")
			require.NoError(t, err)
			require.Equal(t, m, loaded)
		})
	}
	_, why, err := LoadChecked(t.TempDir(), "run_01NONE")
	require.ErrorIs(t, err, ErrNotFound)
	require.Nil(t, why)
}
