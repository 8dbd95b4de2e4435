package rpcline

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/tidwall/gjson"
)

// The JSON-RPC error codes of a line Check refuses.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
)

// Message is one JSON-RPC 2.0 message as Check read it.
type Message struct {
	// Line is the message without the blanks around it, and a newline:
	// what an SDK reads (the Go SDKs end the connection at a blank
	// between a message and its newline). It shares the line's memory.
	Line []byte
	// ID is the id; nil when there is none (a notification), or, in a
	// response, when it is null.
	ID     json.RawMessage
	Method string // "" in a response
	Params json.RawMessage
}

// Notification reports whether m is a request with no id: no answer.
func (m *Message) Notification() bool { return m.Method != "" && m.ID == nil }

// Invalid is a line that is not one JSON-RPC 2.0 message, and how to
// answer it: an error of Code with Reason to each of IDs, or, when there
// are none, one error to id null.
type Invalid struct {
	Code   int64
	Reason string
	IDs    []json.RawMessage // the requests' ids, as ValidID allows
	Batch  bool              // the line is a batch (an array)
}

// Check reads line as one JSON-RPC 2.0 message. A blank line is neither
// a message nor invalid (nil, nil). Invalid are: a line that is not JSON
// (CodeParseError); a batch, each of whose requests is answered (the
// servers' SDKs take none); and anything else that is not one message
// (CodeInvalidRequest): not an object, "jsonrpc" not "2.0", an id that
// ValidID refuses, a method that is not a non-empty string, a request
// with a result or an error, a request whose id is null (JSON-RPC's
// discouraged request id, which the servers' SDKs take for a
// notification's and never answer), a response without an id or with other than
// one of a result and an error, or with an error that is not
// {code: integer, message: string}. The id answered is the request's
// when ValidID allows it (ID), else null.
func Check(line []byte) (*Message, *Invalid) {
	msg := bytes.TrimSpace(line)
	switch {
	case len(msg) == 0:
		return nil, nil
	case !json.Valid(msg):
		return nil, &Invalid{Code: CodeParseError, Reason: "the line is not JSON (send one JSON-RPC message a line)"}
	case msg[0] == '[':
		var batch []json.RawMessage
		_ = json.Unmarshal(msg, &batch)
		bad := &Invalid{Code: CodeInvalidRequest, Reason: "a JSON-RPC batch (send one message a line)", Batch: true}
		for _, m := range batch {
			if id := ID(m); id != nil {
				bad.IDs = append(bad.IDs, id)
			}
		}
		return nil, bad
	}
	m, why := message(msg)
	if why != "" {
		bad := &Invalid{Code: CodeInvalidRequest, Reason: why}
		if id := ID(msg); id != nil {
			bad.IDs = []json.RawMessage{id}
		}
		return nil, bad
	}
	m.Line = append(msg, '\n')
	return m, nil
}

// message reads msg, valid JSON, as one JSON-RPC 2.0 message, or says why
// it is not one. Its top-level members are found with gjson, which skips
// the values it is not asked for: a message may be a hundred MiB.
func message(msg []byte) (*Message, string) {
	if msg[0] != '{' {
		return nil, "not a JSON-RPC message (a JSON object)"
	}
	f := map[string]string{} // exact keys, as JSON-RPC reads them; the last one of a key, as encoding/json
	gjson.ParseBytes(msg).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "jsonrpc", "id", "method", "params", "result", "error":
			f[k.Str] = v.Raw
		}
		return true
	})
	if v, ok := str(f["jsonrpc"]); !ok || v != "2.0" {
		return nil, `"jsonrpc" must be "2.0"`
	}
	m := &Message{}
	if p, ok := f["params"]; ok {
		m.Params = json.RawMessage(p)
	}
	id, hasID := f["id"]
	if hasID && id != "null" {
		if !ValidID(json.RawMessage(id)) {
			return nil, "the id must be a string, or a whole number of at most 2^53-1 (one harness can answer exactly)"
		}
		m.ID = json.RawMessage(id)
	}
	_, hasResult := f["result"]
	e, hasError := f["error"]
	if raw, ok := f["method"]; ok {
		v, ok := str(raw)
		switch {
		case !ok || v == "":
			return nil, `"method" must be a non-empty string`
		case hasResult || hasError:
			return nil, `a request has no "result" or "error"`
		case hasID && m.ID == nil:
			// Answered Invalid request to id null: its sender waits for
			// an answer with that id, and the SDKs would give none.
			return nil, "the id of a request must be a string or a whole number, not null (a notification has no id)"
		}
		m.Method = v
		return m, ""
	}
	switch {
	case m.ID == nil:
		return nil, "a message with no method is a response, and needs its request's id"
	case hasResult == hasError:
		return nil, `a response has one of "result" and "error"`
	case hasError && !errorObject(e):
		return nil, `a response's "error" is an object with an integer "code" and a string "message"`
	}
	return m, ""
}

// str reads a JSON string.
func str(raw string) (string, bool) {
	var s string
	return s, len(raw) > 0 && raw[0] == '"' && json.Unmarshal([]byte(raw), &s) == nil
}

// errorObject reports whether raw is a JSON-RPC error object.
func errorObject(raw string) bool {
	var e map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &e) != nil {
		return false
	}
	_, err := strconv.ParseInt(string(e["code"]), 10, 64)
	_, ok := str(string(e["message"]))
	return err == nil && ok
}
