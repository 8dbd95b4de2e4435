package rpcline

import (
	"encoding/json"
	"sync"

	"github.com/tidwall/gjson"
)

// InFlight are the ids of the requests a server's input handed on to its
// SDK and its output has not answered yet. A request that reuses one is
// to be refused: the Go SDKs drop it without an answer (MCP's) or run it
// beside the first and answer both with the one id (ACP's). The zero
// value is ready to use; it is safe for concurrent use.
type InFlight struct {
	mu   sync.Mutex
	ids  map[string]bool
	idle []chan struct{} // Idle's, closed when ids empties
}

// Idle returns a channel closed once no request is in flight: at once
// when none is.
func (f *InFlight) Idle() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := make(chan struct{})
	if len(f.ids) == 0 {
		close(c)
	} else {
		f.idle = append(f.idle, c)
	}
	return c
}

// free forgets key; the caller holds mu.
func (f *InFlight) free(key string) {
	delete(f.ids, key)
	if len(f.ids) == 0 {
		for _, c := range f.idle {
			close(c)
		}
		f.idle = nil
	}
}

// Start notes the id of a request (one Check passed) handed on, and
// reports false, noting nothing, when a request of that id is in
// progress.
func (f *InFlight) Start(id json.RawMessage) bool {
	key := idKey(gjson.ParseBytes(id))
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ids[key] {
		return false
	}
	if f.ids == nil {
		f.ids = map[string]bool{}
	}
	f.ids[key] = true
	return true
}

// End frees id, a request's the server answered itself.
func (f *InFlight) End(id json.RawMessage) {
	key := idKey(gjson.ParseBytes(id))
	f.mu.Lock()
	f.free(key)
	f.mu.Unlock()
}

// Written frees the id msg answers when msg, one whole message the
// server's SDK writes, is a response, and reports whether it answers a
// request in flight (its id was noted and not freed yet). Call it before
// the message is written: the client may reuse the id as soon as it
// reads the answer.
func (f *InFlight) Written(msg []byte) bool {
	var id gjson.Result
	method := false
	gjson.ParseBytes(msg).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "id":
			id = v
		case "method":
			method = true
		}
		return true
	})
	if method || (id.Type != gjson.String && id.Type != gjson.Number) {
		return false
	}
	key := idKey(id)
	f.mu.Lock()
	defer f.mu.Unlock()
	answers := f.ids[key]
	if answers {
		f.free(key)
	}
	return answers
}

// idKey is how the SDKs tell ids apart: a string by its value, a number
// (a whole one, as ValidID allows) by its digits.
func idKey(id gjson.Result) string {
	if id.Type == gjson.String {
		return "s" + id.Str
	}
	return "n" + id.Raw
}
