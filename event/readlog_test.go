package event

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzReadLog: whatever the bytes, ReadLog reads what event.ReadAll
// reads, but for a last line without its newline that does not decode,
// which only it leaves out (cut).
func FuzzReadLog(f *testing.F) {
	data, err := os.ReadFile("../testdata/claude/tool.golden.ndjson")
	require.NoError(f, err)
	f.Add(data)
	f.Add(data[:len(data)-30])
	f.Add([]byte("{\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, cut, err := ReadLog(bytes.NewReader(data))
		all, allErr := ReadAll(bytes.NewReader(data))
		switch {
		case cut:
			require.NoError(t, err)
			require.False(t, bytes.HasSuffix(data, []byte("\n")))
			require.Error(t, allErr)
			require.Equal(t, len(all), len(evs))
		case allErr == nil:
			require.NoError(t, err)
			require.Equal(t, len(all), len(evs))
		default:
			require.Error(t, err)
		}
	})
}
