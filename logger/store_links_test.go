//go:build unix

package logger

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// untar returns the entries of a tar.gz export, by name, in order.
func untar(t *testing.T, data []byte) (names []string, files map[string]string) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	files = map[string]string{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return names, files
		}
		require.NoError(t, err)
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		names = append(names, hdr.Name)
		files[hdr.Name] = string(b)
	}
}

// warnInto returns a warn for Export that writes each warning to buf as
// the CLI writes it to stderr.
func warnInto(buf *bytes.Buffer) func(error) {
	return func(err error) { fmt.Fprintf(buf, "harness: warning: %v\n", err) }
}

// TestLinksOutOfStore: a run's file that is a symbolic link out of the
// store (an agent can make one in the store: ~/.ssh/id_rsa) is never read
// through: export leaves it out, replay and every OpenFile and ReadFile
// refuse it as a FIFO is refused (ErrNotRegular), such a meta reads as
// missing and such a log as empty. A relative link that stays in the
// store is followed, as the file it names.
func TestLinksOutOfStore(t *testing.T) {
	const secret = "-----BEGIN OPENSSH PRIVATE KEY----- secret-7f3a"
	host := t.TempDir()
	hostFile := filepath.Join(host, "id_rsa")
	require.NoError(t, os.WriteFile(hostFile, []byte(secret+"\n"), 0o600))
	// A meta of the run, outside: read through the link, it would be its meta.
	hostMeta := filepath.Join(host, "meta.json")
	require.NoError(t, os.WriteFile(hostMeta, []byte(`{"run":"run_01LINKS","agent":"forged","status":"success"}`), 0o600))

	dir := t.TempDir()
	start := `{"v":1,"type":"session_start","run":"run_01LINKS","seq":1,"ts":1,"agent":"claude"}`
	writeRun(t, dir, "run_01LINKS", t0, t0.Add(time.Second), start)
	writeRun(t, dir, "run_01LOGOUT", t0, t0.Add(time.Second))
	for name, target := range map[string]string{
		"run_01LINKS" + ExtNative:  hostFile,
		"run_01LINKS" + ExtStderr:  "../" + filepath.Base(host) + "/id_rsa", // relative, out
		"run_01LINKS" + ExtMeta:    hostMeta,
		"run_01LOGOUT" + ExtEvents: hostFile,
		"run_01ALIAS" + ExtEvents:  "run_01LINKS" + ExtEvents, // relative, in
	} {
		p := filepath.Join(dir, name)
		require.NoError(t, nilIfMissing(os.Remove(p)))
		require.NoError(t, os.Symlink(target, p))
	}
	var stderr bytes.Buffer
	warn := warnInto(&stderr)

	// Export: what is in the store, and one line for each link left out.
	var buf bytes.Buffer
	require.NoError(t, Export(dir, "run_01LINKS", &buf, warn))
	names, files := untar(t, buf.Bytes())
	require.Equal(t, []string{"run_01LINKS/run_01LINKS.ndjson"}, names)
	require.Equal(t, start+"\n", files["run_01LINKS/run_01LINKS.ndjson"])
	require.NotContains(t, buf.String()+stderr.String(), "secret-7f3a")
	require.Equal(t, "harness: warning: export run_01LINKS: run_01LINKS.meta.json left out: not a regular file (a symbolic link out of its directory)\n"+
		"harness: warning: export run_01LINKS: run_01LINKS.native.jsonl left out: not a regular file (a symbolic link out of its directory)\n"+
		"harness: warning: export run_01LINKS: run_01LINKS.stderr.log left out: not a regular file (a symbolic link out of its directory)\n",
		stderr.String())

	// A run whose only readable file is none: the export fails, writing nothing.
	require.NoError(t, os.Remove(Path(dir, "run_01LOGOUT", ExtMeta)))
	require.NoError(t, os.Remove(Path(dir, "run_01LOGOUT", ExtNative)))
	buf.Reset()
	err := Export(dir, "run_01LOGOUT", &buf, warn)
	require.ErrorIs(t, err, ErrNotRegular)
	require.Zero(t, buf.Len())

	// Every other reader of the run's files.
	err = Replay(dir, "run_01LOGOUT", &buf, 0, nil)
	require.ErrorIs(t, err, ErrNotRegular)
	require.Zero(t, buf.Len())
	for _, ext := range []string{ExtNative, ExtStderr, ExtMeta} {
		_, err = ReadFile(dir, "run_01LINKS", ext)
		require.ErrorIs(t, err, ErrNotRegular, ext)
		_, err = OpenFile(dir, "run_01LINKS", ext)
		require.ErrorIs(t, err, ErrNotRegular, ext)
	}
	_, err = ReadEnds(dir, "run_01LOGOUT", 1<<20)
	require.ErrorIs(t, err, ErrNotRegular)

	// The meta through a link reads as missing (the log's session_start fills it in).
	m, err := Load(dir, "run_01LINKS")
	require.NoError(t, err)
	require.Equal(t, "unknown", m.Status)
	require.Equal(t, "claude", m.Agent)
	for name, list := range map[string]func() ([]Meta, error){"List": func() ([]Meta, error) { return List(dir) }, "Index": NewIndex(dir).List} {
		ms, err := list()
		require.NoError(t, err, name)
		require.Len(t, ms, 3, name)
		for _, m := range ms {
			require.NotEqual(t, "forged", m.Agent, name)
		}
	}

	// A link within the store is read as the file it names.
	buf.Reset()
	require.NoError(t, Replay(dir, "run_01ALIAS", &buf, 0, nil))
	require.Equal(t, start+"\n", buf.String())
}

func nilIfMissing(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// TestExportLeavesOutOddFiles: one file of a run that is not a regular
// file (a FIFO meta, a directory in the place of its stderr log) leaves
// that file out of the export, said in one line each (or handed to
// Export's warn), and the rest is exported: it made the whole export
// fail, with nothing exported.
func TestExportLeavesOutOddFiles(t *testing.T) {
	dir := t.TempDir()
	start := `{"v":1,"type":"session_start","run":"run_01ODD","seq":1,"ts":1}`
	writeRun(t, dir, "run_01ODD", t0, t0.Add(time.Second), start)
	require.NoError(t, os.Remove(Path(dir, "run_01ODD", ExtMeta)))
	mkfifos(t, Path(dir, "run_01ODD", ExtMeta))
	require.NoError(t, os.Mkdir(Path(dir, "run_01ODD", ExtStderr), 0o700))
	var stderr bytes.Buffer
	warn := warnInto(&stderr)

	var buf bytes.Buffer
	_, err := within(t, "Export", func() (any, error) { return nil, Export(dir, "run_01ODD", &buf, warn) })
	require.NoError(t, err)
	names, files := untar(t, buf.Bytes())
	require.Equal(t, []string{"run_01ODD/run_01ODD.ndjson", "run_01ODD/run_01ODD.native.jsonl"}, names)
	require.Equal(t, start+"\n", files["run_01ODD/run_01ODD.ndjson"])
	require.Equal(t, "harness: warning: export run_01ODD: run_01ODD.meta.json left out: not a regular file (a FIFO)\n"+
		"harness: warning: export run_01ODD: run_01ODD.stderr.log left out: not a regular file (a directory)\n", stderr.String())

	var warned []error
	buf.Reset()
	require.NoError(t, Export(dir, "run_01ODD", &buf, func(err error) { warned = append(warned, err) }))
	require.Len(t, warned, 2)
	require.ErrorIs(t, warned[0], ErrNotRegular)
	require.Equal(t, 1, strings.Count(stderr.String(), "FIFO"), "a warn of its own gets the warnings")
}
