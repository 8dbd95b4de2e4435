//go:build unix

package logger

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestNonRegularFiles: a FIFO among a run's files is never opened: the
// readers of the store answer at once, where the open of a FIFO waited
// for a writer (List and Index.List with it, and `harness sessions list`
// and serve's run list behind them). A run whose meta is a FIFO loads as
// one whose meta is missing.
func TestNonRegularFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mkfifos(t, filepath.Join(dir, "run_fifolog"+ExtEvents), filepath.Join(dir, "run_fifometa"+ExtMeta))
	writeRun(t, dir, "run_ok", t0, t0.Add(time.Second), `{"v":1,"type":"session_start","run":"run_ok","seq":1}`)

	_, err := within(t, "OpenTail", func() (any, error) { return OpenTail(dir, "run_fifolog") })
	require.ErrorIs(t, err, ErrNotRegular)
	_, err = within(t, "OpenFile", func() (any, error) { return OpenFile(dir, "run_fifolog", ExtEvents) })
	require.ErrorIs(t, err, ErrNotRegular)
	_, err = within(t, "Follow", func() (any, error) {
		return nil, Follow(context.Background(), dir, "run_fifolog", FollowOptions{}, func(int64, []byte) error { return nil })
	})
	require.ErrorIs(t, err, ErrNotRegular)
	_, err = within(t, "Replay", func() (any, error) { return nil, Replay(dir, "run_fifolog", io.Discard, 0, nil) })
	require.ErrorIs(t, err, ErrNotRegular)
	_, err = within(t, "Export", func() (any, error) { return nil, Export(dir, "run_fifolog", io.Discard, nil) })
	require.ErrorIs(t, err, ErrNotRegular)

	m, err := within(t, "Load", func() (any, error) { return Load(dir, "run_fifometa") })
	require.NoError(t, err)
	require.Equal(t, Meta{Run: "run_fifometa", Status: "unknown", Start: m.(Meta).Start}, m)
	for name, list := range map[string]func() ([]Meta, error){"List": func() ([]Meta, error) { return List(dir) }, "Index": NewIndex(dir).List} {
		ms, err := within(t, name, func() (any, error) { return list() })
		require.NoError(t, err)
		require.Len(t, ms, 3, name)
	}
}

// mkfifos makes a FIFO at each path; at the end of the test each is
// opened for writing once, so that an open the code under test is stuck
// in returns (and a failing test does not leave it blocked).
func mkfifos(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		require.NoError(t, syscall.Mkfifo(p, 0o600))
		t.Cleanup(func() {
			if f, err := os.OpenFile(p, os.O_RDWR, 0); err == nil { // O_RDWR: no wait for a reader
				f.Close()
			}
		})
	}
}

// within returns what fn returns, failing the test if fn blocks.
func within(t *testing.T, what string, fn func() (any, error)) (any, error) {
	t.Helper()
	type answer struct {
		v   any
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		v, err := fn()
		ch <- answer{v, err}
	}()
	select {
	case a := <-ch:
		return a.v, a.err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s blocked on a FIFO", what)
		return nil, nil
	}
}
