package rpcline

import (
	"encoding/json"
	"fmt"
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
		var keys map[string]json.RawMessage
		_ = json.Unmarshal([]byte(msg), &keys)
		_, hasID := keys["id"] // null too: a request, answered with id null
		for _, size := range []int{1, 2, 3, 7, len(msg)} {
			var f topFields
			for i := 0; i < len(msg); i += size {
				f.write([]byte(msg[i:min(i+size, len(msg))]))
			}
			require.Equal(t, want.Method, f.method, "%s in pieces of %d", msg, size)
			require.Equal(t, hasID, f.hasID, "%s in pieces of %d", msg, size)
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

// TestValidIDExact: a number id is valid only when every JSON reader
// holds it exactly and answers it as it was written: whole, plain, of at
// most 2^53-1 in magnitude.
func TestValidIDExact(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]bool{
		`0`: true, `7`: true, `-7`: true, `9007199254740991`: true, `-9007199254740991`: true,
		`"a\"b"`: true, `""`: true,
		`1.5`: false, `1.0`: false, `1e3`: false, `-0`: false, `9007199254740992`: false,
		`9007199254740993`: false, `12345678901234567890`: false, `-9223372036854775808`: false,
		`"unterminated`: false, `true`: false, `null`: false, ``: false,
	} {
		require.Equal(t, want, ValidID(json.RawMessage(id)), id)
	}
}

// TestCheck: what is one JSON-RPC 2.0 message, what is not, and which ids
// the error answers name.
func TestCheck(t *testing.T) {
	t.Parallel()
	m, bad := Check([]byte(" \t\r\n"))
	require.Nil(t, m)
	require.Nil(t, bad, "a blank line is neither")

	for line, want := range map[string]Message{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}` + " \r\n": {Line: []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}` + "\n"),
			ID: json.RawMessage(`1`), Method: "m", Params: json.RawMessage(`{"a":1}`)},
		`{"jsonrpc":"2.0","method":"n"}`:           {Line: []byte(`{"jsonrpc":"2.0","method":"n"}` + "\n"), Method: "n"},
		`{"jsonrpc":"2.0","id":"r","result":null}`: {Line: []byte(`{"jsonrpc":"2.0","id":"r","result":null}` + "\n"), ID: json.RawMessage(`"r"`)},
		`{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"x","data":[1]}}`: {Line: []byte(`{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"x","data":[1]}}` + "\n"),
			ID: json.RawMessage(`2`)},
	} {
		m, bad := Check([]byte(line))
		require.Nil(t, bad, line)
		require.Equal(t, want, *m, line)
	}
	require.True(t, (&Message{Method: "n"}).Notification())

	for line, want := range map[string]string{
		`garbage`:                           `-32700 []`,
		`{"jsonrpc":"2.0","method":"m"} {}`: `-32700 []`,
		`42`:                                `-32600 []`,
		`[]`:                                `-32600 [] batch`,
		`[{"jsonrpc":"2.0","id":1,"method":"m"},{"jsonrpc":"2.0","method":"n"},{"id":"b","method":"m"},{"id":1.5,"method":"m"}]`: `-32600 [1 "b"] batch`,
		`{"jsonrpc":"1.0","id":3,"method":"m"}`:                      `-32600 [3]`,
		`{"JSONRPC":"2.0","id":3,"method":"m"}`:                      `-32600 [3]`,
		`{"jsonrpc":"2.0","id":true,"method":"m"}`:                   `-32600 []`,
		`{"jsonrpc":"2.0","id":1.5,"method":"m"}`:                    `-32600 []`,
		`{"jsonrpc":"2.0","id":null,"method":"n"}`:                   `-32600 []`, // a request, answered to id null
		`{"jsonrpc":"2.0","id":4,"method":""}`:                       `-32600 [4]`,
		`{"jsonrpc":"2.0","id":4,"method":null}`:                     `-32600 [4]`,
		`{"jsonrpc":"2.0","id":5,"method":"m","error":"x"}`:          `-32600 [5]`,
		`{"jsonrpc":"2.0","result":{}}`:                              `-32600 []`,
		`{"jsonrpc":"2.0","id":6}`:                                   `-32600 []`,
		`{"jsonrpc":"2.0","id":6,"result":1,"error":{}}`:             `-32600 []`,
		`{"jsonrpc":"2.0","id":6,"error":{"code":1.5,"message":""}}`: `-32600 []`,
		`{"jsonrpc":"2.0","id":6,"error":{"code":1}}`:                `-32600 []`,
	} {
		m, bad := Check([]byte(line))
		require.Nil(t, m, line)
		require.NotNil(t, bad, line)
		require.NotEmpty(t, bad.Reason, line)
		ids := make([]string, len(bad.IDs))
		for i, id := range bad.IDs {
			ids[i] = string(id)
		}
		got := fmt.Sprintf("%d %v", bad.Code, ids)
		if bad.Batch {
			got += " batch"
		}
		require.Equal(t, want, got, line)
	}
}

// TestInFlightWritten: an answer frees its request's id, once, and
// reports so; a request, a notification or an answer to no request in
// flight frees nothing.
func TestInFlightWritten(t *testing.T) {
	t.Parallel()
	var f InFlight
	require.True(t, f.Start(json.RawMessage(`7`)))
	require.True(t, f.Start(json.RawMessage(`"7"`)))
	require.False(t, f.Start(json.RawMessage(`7`)), "in progress")
	require.False(t, f.Written([]byte(`{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file"}`)), "a request of the server's")
	require.False(t, f.Written([]byte(`{"jsonrpc":"2.0","method":"session/update"}`)))
	require.True(t, f.Written([]byte(`{"jsonrpc":"2.0","id":7,"result":{}}`)))
	require.False(t, f.Written([]byte(`{"jsonrpc":"2.0","id":7,"result":{}}`)), "answered already")
	require.True(t, f.Start(json.RawMessage(`7`)), "free again")
	f.End(json.RawMessage(`"7"`))
	require.False(t, f.Written([]byte(`{"jsonrpc":"2.0","id":"7","error":{"code":1,"message":"m"}}`)), "ended")
}

// TestInFlightIdle: Idle's channel is closed at once with no request in
// flight, else once the last is answered or ended.
func TestInFlightIdle(t *testing.T) {
	t.Parallel()
	var f InFlight
	closed := func(c <-chan struct{}) bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	}
	require.True(t, closed(f.Idle()))
	require.True(t, f.Start(json.RawMessage(`1`)))
	require.True(t, f.Start(json.RawMessage(`2`)))
	idle := f.Idle()
	require.False(t, f.Written([]byte(`{"jsonrpc":"2.0","id":3,"result":{}}`)))
	require.True(t, f.Written([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)))
	require.False(t, closed(idle), "2 is in flight")
	f.End(json.RawMessage(`2`))
	require.True(t, closed(idle))
}

// TestOversizeNullID: an oversize request whose id is null is a request
// still, answered to id null; it was dropped as a notification.
func TestOversizeNullID(t *testing.T) {
	t.Parallel()
	line := `{"jsonrpc":"2.0","id":null,"method":"m","params":"` + strings.Repeat("x", 100) + `"}` + "\n"
	_, o, err := NewReader(strings.NewReader(line), 10).Next()
	require.NoError(t, err)
	require.Equal(t, &Oversize{Size: len(line), Method: "m", Request: true}, o)
}
