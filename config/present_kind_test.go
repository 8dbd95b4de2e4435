package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentharness/harness/internal/fifotest"
	"github.com/agentharness/harness/internal/regfile"
	"github.com/stretchr/testify/require"
)

// TestPresentRefusesWhatIsNotAFile: what is at a config file's path but
// is not a regular file is no config file there to read: Present said
// true of a directory (and of a FIFO), so `config path` showed it as the
// file while Load refused it. It is Load's *Error, in Load's words.
func TestPresentRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	asDir := filepath.Join(dir, "d", ProjectFileName)
	require.NoError(t, os.MkdirAll(asDir, 0o755))
	fifo := fifotest.Make(t, filepath.Join(dir, "config.toml"))
	for path, kind := range map[string]string{asDir: "a directory", fifo: "a FIFO"} {
		present, err := Present(path)
		require.False(t, present, path)
		require.EqualError(t, err, path+": not a regular file ("+kind+")")
		require.ErrorIs(t, err, regfile.ErrNotRegular)
		var ce *Error
		require.ErrorAs(t, err, &ce)
		_, _, lerr := Load(LoadOptions{UserFile: path})
		require.EqualError(t, lerr, err.Error(), "Load says the same")
	}
	regular := filepath.Join(dir, "regular.toml")
	require.NoError(t, os.WriteFile(regular, nil, 0o644))
	present, err := Present(regular)
	require.NoError(t, err)
	require.True(t, present)
}
