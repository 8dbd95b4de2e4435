package rpcline

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzCheck: Check, which both servers run on every line a client sends,
// never panics, and says one thing of a line: nothing (blank), a message
// whose Line is the JSON-RPC 2.0 object and a newline, or an invalid line
// with a JSON-RPC code and only ids that can be answered exactly.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		``, `   `, `{bad`, `"str"`, `[]`, `[{"jsonrpc":"2.0","id":1,"method":"m"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","method":"n","params":{}}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`, `{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"x"}}`,
		`{"jsonrpc":"1.0","id":1,"method":"m"}`, `{"jsonrpc":"2.0","id":1.5,"method":"m"}`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"m"}`, `{"jsonrpc":"2.0","id":1,"method":"m","result":1}`,
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"m"}`, `{"jsonrpc":"2.0","id":"\ud800","method":"m"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, bad := Check(line)
		switch {
		case m != nil && bad != nil:
			t.Fatalf("both a message and invalid: %q", line)
		case m != nil:
			if len(m.Line) == 0 || m.Line[len(m.Line)-1] != '\n' || !json.Valid(m.Line[:len(m.Line)-1]) {
				t.Fatalf("a message whose line is not JSON and a newline: %q", m.Line)
			}
			if m.ID != nil && !ValidID(m.ID) {
				t.Fatalf("a message with an id that cannot be answered exactly: %s", m.ID)
			}
		case bad != nil:
			if bad.Code != CodeParseError && bad.Code != CodeInvalidRequest {
				t.Fatalf("code %d", bad.Code)
			}
			for _, id := range bad.IDs {
				if !ValidID(id) {
					t.Fatalf("answers an id that cannot be answered exactly: %s", id)
				}
			}
		default:
			if len(bytes.TrimSpace(line)) != 0 {
				t.Fatalf("neither a message nor invalid: %q", line)
			}
		}
	})
}
