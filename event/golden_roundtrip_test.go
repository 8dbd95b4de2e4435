package event

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoldenRoundTrip: every line of every golden stream decodes and
// encodes back to the same bytes, so that a reader that re-writes a
// stream (a filter, a copy) loses nothing of it.
func TestGoldenRoundTrip(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../testdata/*/*.golden.ndjson")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var out bytes.Buffer
		enc := NewEncoder(&out)
		for n, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			ev, err := Decode(line)
			require.NoError(t, err, "%s:%d", f, n+1)
			before := out.Len()
			require.NoError(t, enc.Encode(ev), "%s:%d", f, n+1)
			assert.Equal(t, string(line)+"\n", out.String()[before:], "%s:%d", f, n+1)
		}
	}
}

// TestDecodeWarningLineGiven: an unparsed_line warning keeps its "bytes"
// and "line" through Decode and re-encoding when they are empty, and a
// warning without them does not gain them.
func TestDecodeWarningLineGiven(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		`{"v":1,"type":"warning","run":"r","seq":2,"ts":3,"code":"unparsed_line","message":"m","bytes":0,"line":""}`,
		`{"v":1,"type":"warning","run":"r","seq":2,"ts":3,"code":"unparsed_line","message":"m","bytes":3,"line":"abc"}`,
		`{"v":1,"type":"warning","run":"r","seq":2,"ts":3,"code":"idle","message":"m","idle_ms":5}`,
		`{"v":1,"type":"warning","run":"r","seq":2,"ts":3,"code":"line_truncated","message":"m","bytes":7}`,
	} {
		ev, err := Decode([]byte(line))
		require.NoError(t, err, line)
		got, err := ev.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, line, string(got))
	}
	ev, err := Decode([]byte(`{"v":1,"type":"warning","run":"r","seq":2,"ts":3,"code":"c","message":"m","bytes":0}`))
	require.NoError(t, err)
	require.False(t, ev.Body.(*Warning).LineGiven, "only both keys stand for LineGiven")
}
