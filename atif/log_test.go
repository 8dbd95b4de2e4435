package atif_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/atif"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/logger"
)

// logRun writes a session log of the golden stream file with prompt.
func logRun(t *testing.T, dir, file, prompt string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	run := event.NewRunID()
	s, err := logger.Open(dir, run, logger.Meta{Agent: "opencode", PromptPreview: prompt})
	require.NoError(t, err)
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) > 0 {
			require.NoError(t, s.WriteEvent(bytes.TrimSuffix(line, []byte("\n"))))
		}
	}
	require.NoError(t, s.Close(logger.Meta{Status: "success"}))
	return run
}

// TestWriteLog: bench's trajectory file sits beside the session log,
// 0600, valid, the same as sessions export; it is pruned and exported
// with the run's other files.
func TestWriteLog(t *testing.T) {
	dir := t.TempDir()
	const golden = "../testdata/opencode/multi_step_reasoning.golden.ndjson"
	run := logRun(t, dir, golden, "count the files")
	path, err := atif.WriteLog(dir, run, "")
	require.NoError(t, err)
	require.Equal(t, logger.Path(dir, run, logger.ExtTrajectory), path)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	tr := validate(t, data)
	require.NoError(t, atif.Check(tr, readEvents(t, golden)))
	require.Equal(t, "count the files", tr.Steps[0].Message, "a preview shorter than the cut is the whole prompt")

	loaded, err := atif.Load(dir, run[:10], "")
	require.NoError(t, err)
	again, err := atif.Marshal(loaded)
	require.NoError(t, err)
	require.Equal(t, string(data), string(again))

	var buf bytes.Buffer
	require.NoError(t, logger.Export(dir, run, &buf, nil))
	zr, err := gzip.NewReader(&buf)
	require.NoError(t, err)
	names := ""
	for tw := tar.NewReader(zr); ; {
		hdr, err := tw.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		names += hdr.Name + "\n"
	}
	require.Contains(t, names, run+logger.ExtTrajectory)

	removed, err := logger.Prune(dir, 0, time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, []string{run}, removed)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries)
}

// TestLoadPrompt: a prompt the meta keeps only in part is not in the
// trajectory (never a cut prompt); one the caller gives whole is.
func TestLoadPrompt(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", logger.PromptPreviewLen+1)
	run := logRun(t, dir, "../testdata/opencode/multi_step_reasoning.golden.ndjson", long)
	tr, err := atif.Load(dir, run, "")
	require.NoError(t, err)
	require.Equal(t, "agent", tr.Steps[0].Source)
	require.NotEmpty(t, tr.Notes)
	tr, err = atif.Load(dir, run, long)
	require.NoError(t, err)
	require.Equal(t, long, tr.Steps[0].Message)
}

// TestLoadBad: an unknown run is logger.ErrNotFound; a log that does not
// decode is an error naming the file and line; neither writes a file.
func TestLoadBad(t *testing.T) {
	dir := t.TempDir()
	_, err := atif.WriteLog(dir, "run_nope", "")
	require.ErrorIs(t, err, logger.ErrNotFound)
	run := logRun(t, dir, "../testdata/opencode/text.golden.ndjson", "hi")
	f, err := os.OpenFile(logger.Path(dir, run, logger.ExtEvents), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{\"v\":1,\"type\":\"text_delta\",\"text\":5}\n") // a known type that does not decode
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = atif.WriteLog(dir, run, "")
	require.ErrorContains(t, err, run+".ndjson: line ")
	_, err = os.Stat(logger.Path(dir, run, logger.ExtTrajectory))
	require.ErrorIs(t, err, os.ErrNotExist)
}
