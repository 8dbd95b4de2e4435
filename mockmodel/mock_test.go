package mockmodel

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPoint: a built-in agent is wired by Prepare, a registered one by its
// own wiring (given the server's URL and a fresh HOME, set in its env), an
// agent with neither cannot use the mock; Close removes every home.
func TestPoint(t *testing.T) {
	m, err := StartMock("text", "")
	require.NoError(t, err)
	work := t.TempDir()

	model, env, err := m.Point("claude", work, nil)
	require.NoError(t, err)
	require.Equal(t, Agents["claude"], model)
	require.Contains(t, env, "ANTHROPIC_BASE_URL="+m.srv.URL())

	var home string
	model, env, err = m.Point("toy", work, func(baseURL, h, workdir string) (string, []string, error) {
		home = h
		require.Equal(t, m.srv.URL(), baseURL)
		require.Equal(t, work, workdir)
		require.DirExists(t, h)
		return "toy-model", []string{"TOY_BASE_URL=" + baseURL}, nil
	})
	require.NoError(t, err)
	require.Equal(t, "toy-model", model)
	require.Equal(t, []string{"HOME=" + home, "PWD=" + work, "TOY_BASE_URL=" + m.srv.URL()}, env)

	_, _, err = m.Point("toy", work, func(string, string, string) (string, []string, error) { return "", nil, errors.New("boom") })
	require.ErrorContains(t, err, "boom")
	_, _, err = m.Point("nope", work, nil)
	require.ErrorContains(t, err, "cannot run on the scripted model")

	require.NoError(t, m.Close())
	_, err = os.Stat(filepath.Dir(home))
	require.True(t, os.IsNotExist(err), "the homes are removed")
}
