package rpcline

import (
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// TestReader: lines up to the cap come whole, whatever the pieces they
// are read in; a line over it comes as its size, id and method, and the
// next line is read as usual.
func TestReader(t *testing.T) {
	t.Parallel()
	big := `{"jsonrpc":"2.0","id":"b","method":"m","params":"` + strings.Repeat("x", 200<<10) + `"}`
	note := `{"method":"n","params":"` + strings.Repeat("y", 100) + `"}`
	in := "a\n\n" + big + "\n" + note + "\nlast"
	r := NewReader(iotest.HalfReader(strings.NewReader(in)), 100)
	var got []string
	var over []Oversize
	for {
		line, o, err := r.Next()
		if o != nil {
			over = append(over, *o)
		} else {
			got = append(got, string(line))
		}
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
	}
	require.Equal(t, []string{"a\n", "\n", "last"}, got)
	require.Equal(t, []Oversize{
		{Size: len(big) + 1, Method: "m", ID: json.RawMessage(`"b"`), Request: true},
		{Size: len(note) + 1, Method: "n"},
	}, over)
}

// TestReaderOversizeNotHeld: a line far over the cap costs the reader's
// buffer, not the line.
func TestReaderOversizeNotHeld(t *testing.T) {
	line := `{"id":1,"method":"m","params":"` + strings.Repeat("z", 64<<20) + `"}` + "\n"
	r := NewReader(strings.NewReader(line), 1<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	l, o, err := r.Next()
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Nil(t, l)
	require.Equal(t, &Oversize{Size: len(line), Method: "m", ID: json.RawMessage("1"), Request: true}, o)
	allocated := after.TotalAlloc - before.TotalAlloc
	require.Less(t, allocated, uint64(8<<20), "a line of %d bytes allocated %d bytes", len(line), allocated)
}

// TestTopFields: the id and method of a message too long to hold are read
// as a JSON decoder reads them, whatever the pieces it comes in, from the
// top object only.
func TestTopFields(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("a", 100)
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"x":"` + big + `"}}`,
		`{"jsonrpc":"2.0","method":"session/prompt","params":{"id":1,"method":"no","s":"\"}{,:"},"id":"a\"b"}`,
		` { "params" : [1,{"id":2}], "method" : "x\u0041" , "id" : -1.5e3 } `,
		`{"method":"session/cancel","params":{"sessionId":"s"}}`,
		`{"id":null,"method":"m"}`,
		`{"id":{"x":1},"method":"m"}`,
		`{"id":3,"result":{"id":4}}`,
		`[1,2]`,
		`{"id":"` + strings.Repeat("i", 5000) + `","method":"m"}`,
	} {
		var want struct {
			ID     *json.RawMessage `json:"id"`
			Method string           `json:"method"`
		}
		_ = json.Unmarshal([]byte(msg), &want)
		for _, size := range []int{1, 2, 3, 7, len(msg)} {
			var f topFields
			for i := 0; i < len(msg); i += size {
				f.write([]byte(msg[i:min(i+size, len(msg))]))
			}
			require.Equal(t, want.Method, f.method, "%s in pieces of %d", msg, size)
			require.Equal(t, want.ID != nil, f.hasID, "%s in pieces of %d", msg, size)
			if want.ID != nil && len(*want.ID) <= maxIDBytes {
				require.JSONEq(t, string(*want.ID), string(f.id), msg)
			}
		}
	}
	require.True(t, ValidID(json.RawMessage(`7`)))
	require.True(t, ValidID(json.RawMessage(`"x"`)))
	require.False(t, ValidID(json.RawMessage(`{"x":1}`)))
	require.False(t, ValidID(json.RawMessage(`[1]`)))
	require.False(t, ValidID(json.RawMessage(`null`)))
	require.False(t, ValidID(json.RawMessage(`"`+strings.Repeat("i", 5000)+`"`)))
}

// TestID: only a request's id is one to answer with.
func TestID(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]string{
		`{"jsonrpc":"1.0","id":1,"method":"m"}`:   `1`,
		`{"id":"a","method":null}`:                `"a"`,
		`{"id":true,"method":"m"}`:                ``,
		`{"id":1,"result":{}}`:                    ``,
		`{"method":"m"}`:                          ``,
		`{"ID":1,"Method":"m"}`:                   ``,
		`[{"jsonrpc":"2.0","id":1,"method":"m"}]`: ``,
		`garbage`: ``,
	} {
		require.Equal(t, want, string(ID([]byte(msg))), msg)
	}
}
