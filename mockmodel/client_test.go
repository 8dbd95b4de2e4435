package mockmodel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sseEvent is one server-sent event as a client reads it.
type sseEvent struct {
	Name string
	Data string
}

// readSSE splits an SSE body into events; it stops at EOF or a read error.
func readSSE(r io.Reader) ([]sseEvent, error) {
	var (
		out []sseEvent
		cur sseEvent
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Data != "" || cur.Name != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.Data += strings.TrimPrefix(line, "data: ")
		default:
			return out, fmt.Errorf("bad SSE line %q", line)
		}
	}
	return out, sc.Err()
}

// cliTools are the tool lists the four CLIs send (real-clis.md), with the schemas' relevant parts.
type toolDef struct {
	Name   string
	Schema map[string]any
	Custom bool
}

func props(required []string, fields map[string]string) map[string]any {
	p := map[string]any{}
	for k, typ := range fields {
		p[k] = map[string]any{"type": typ}
	}
	req := []any{}
	for _, r := range required {
		req = append(req, r)
	}
	return map[string]any{"type": "object", "properties": p, "required": req}
}

var (
	claudeTools = []toolDef{
		{Name: "Task", Schema: props([]string{"prompt"}, map[string]string{"prompt": "string"})},
		{Name: "Bash", Schema: props([]string{"command"}, map[string]string{"command": "string", "description": "string", "timeout": "number"})},
		{Name: "Edit", Schema: props([]string{"file_path"}, map[string]string{"file_path": "string"})},
		{Name: "Read", Schema: props([]string{"file_path"}, map[string]string{"file_path": "string"})},
		{Name: "Write", Schema: props([]string{"file_path", "content"}, map[string]string{"file_path": "string", "content": "string"})},
	}
	codexTools = []toolDef{
		{Name: "exec_command", Schema: props([]string{"cmd"}, map[string]string{"cmd": "string", "workdir": "string", "yield_time_ms": "number"})},
		{Name: "write_stdin", Schema: props([]string{"session_id"}, map[string]string{"session_id": "number"})},
		{Name: "apply_patch", Custom: true},
		{Name: "view_image", Schema: props([]string{"path"}, map[string]string{"path": "string"})},
	}
	codexShellArrayTools = []toolDef{
		{Name: "shell", Schema: props([]string{"command"}, map[string]string{"command": "array", "workdir": "string"})},
		{Name: "apply_patch", Schema: props([]string{"input"}, map[string]string{"input": "string"})},
	}
	opencodeTools = []toolDef{
		{Name: "bash", Schema: props([]string{"command", "description"}, map[string]string{"command": "string", "description": "string", "timeout": "number"})},
		{Name: "edit", Schema: props([]string{"filePath"}, map[string]string{"filePath": "string"})},
		{Name: "glob", Schema: props([]string{"pattern"}, map[string]string{"pattern": "string"})},
		{Name: "read", Schema: props([]string{"filePath"}, map[string]string{"filePath": "string"})},
		{Name: "todowrite", Schema: props([]string{"todos"}, map[string]string{"todos": "array"})},
		{Name: "write", Schema: props([]string{"content", "filePath"}, map[string]string{"content": "string", "filePath": "string"})},
	}
	geminiTools = []toolDef{
		{Name: "read_file", Schema: props([]string{"file_path"}, map[string]string{"file_path": "STRING"})},
		{Name: "run_shell_command", Schema: props([]string{"command"}, map[string]string{"command": "STRING", "description": "STRING", "dir_path": "STRING"})},
		{Name: "write_file", Schema: props([]string{"file_path", "content"}, map[string]string{"file_path": "STRING", "content": "STRING"})},
		{Name: "write_todos", Schema: props([]string{"todos"}, map[string]string{"todos": "ARRAY"})},
	}
)

// reply is a model response decoded the way the CLI's SDK would, API-independent.
type reply struct {
	Status  int
	Header  http.Header
	Text    string
	Deltas  int
	Calls   []gotCall
	Usage   Usage
	Stop    string
	ErrBody map[string]any
}

type gotCall struct {
	Name  string
	Args  map[string]any
	Input string // custom tool input
	ID    string
}

type client struct {
	t   *testing.T
	url string
	api string
}

// body builds a request of c.api offering tools, whose conversation holds `results` tool results.
func (c client) body(tools []toolDef, results int, stream bool) (path string, body map[string]any) {
	switch c.api {
	case APIAnthropic:
		var ts []any
		for _, t := range tools {
			ts = append(ts, map[string]any{"name": t.Name, "description": "d", "input_schema": t.Schema})
		}
		msgs := []any{map[string]any{"role": "user", "content": "do it"}}
		if results > 0 {
			var blocks []any
			for i := range results {
				blocks = append(blocks, map[string]any{"type": "tool_result", "tool_use_id": fmt.Sprint("t", i), "content": "ok"})
			}
			msgs = append(msgs, map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "x"}}},
				map[string]any{"role": "user", "content": blocks})
		}
		return "/v1/messages?beta=true", map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 1000, "stream": stream, "tools": ts, "messages": msgs}
	case APIResponses:
		var ts []any
		for _, t := range tools {
			if t.Custom {
				ts = append(ts, map[string]any{"type": "custom", "name": t.Name, "format": map[string]any{"type": "grammar"}})
			} else {
				ts = append(ts, map[string]any{"type": "function", "name": t.Name, "parameters": t.Schema, "strict": false})
			}
		}
		input := []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "do it"}}}}
		for i := range results {
			input = append(input, map[string]any{"type": "function_call", "call_id": fmt.Sprint("c", i), "name": "x", "arguments": "{}"},
				map[string]any{"type": "function_call_output", "call_id": fmt.Sprint("c", i), "output": "ok"})
		}
		return "/v1/responses", map[string]any{"model": "gpt-5.5", "stream": stream, "tools": ts, "input": input}
	case APIChat:
		var ts []any
		for _, t := range tools {
			ts = append(ts, map[string]any{"type": "function", "function": map[string]any{"name": t.Name, "parameters": t.Schema}})
		}
		msgs := []any{map[string]any{"role": "system", "content": "s"}, map[string]any{"role": "user", "content": "do it"}}
		for i := range results {
			msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": fmt.Sprint("c", i), "content": "ok"})
		}
		b := map[string]any{"model": "mock-model", "stream": stream, "messages": msgs, "stream_options": map[string]any{"include_usage": true}}
		if ts != nil {
			b["tools"] = ts
		}
		return "/v1/chat/completions", b
	case APIGemini:
		var decls []any
		for _, t := range tools {
			decls = append(decls, map[string]any{"name": t.Name, "description": "d", "parametersJsonSchema": t.Schema})
		}
		contents := []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "do it"}}}}
		if results > 0 {
			var parts []any
			for range results {
				parts = append(parts, map[string]any{"functionResponse": map[string]any{"name": "x", "response": map[string]any{"output": "ok"}}})
			}
			contents = append(contents, map[string]any{"role": "model", "parts": []any{map[string]any{"text": "x"}}},
				map[string]any{"role": "user", "parts": parts})
		}
		b := map[string]any{"contents": contents}
		if decls != nil {
			b["tools"] = []any{map[string]any{"functionDeclarations": decls}}
		}
		method := ":generateContent"
		if stream {
			method = ":streamGenerateContent?alt=sse"
		}
		return "/v1beta/models/gemini-2.5-flash" + method, b
	}
	panic(c.api)
}

// post sends a model request and opens the response.
func (c client) post(ctx context.Context, tools []toolDef, results int, stream bool) *http.Response {
	c.t.Helper()
	path, body := c.body(tools, results, stream)
	data, err := json.Marshal(body)
	require.NoError(c.t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+path, bytes.NewReader(data))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	return resp
}

// call makes one model request and decodes the answer.
func (c client) call(tools []toolDef, results int, stream bool) reply {
	c.t.Helper()
	resp := c.post(context.Background(), tools, results, stream)
	defer resp.Body.Close()
	r := reply{Status: resp.StatusCode, Header: resp.Header}
	if resp.StatusCode != http.StatusOK {
		require.NoError(c.t, json.NewDecoder(resp.Body).Decode(&r.ErrBody))
		return r
	}
	if !stream {
		require.Equal(c.t, "application/json", resp.Header.Get("Content-Type"))
		var m map[string]any
		require.NoError(c.t, json.NewDecoder(resp.Body).Decode(&m))
		c.decodeWhole(m, &r)
		return r
	}
	require.Equal(c.t, "text/event-stream", resp.Header.Get("Content-Type"))
	events, err := readSSE(resp.Body)
	require.NoError(c.t, err)
	switch c.api {
	case APIAnthropic:
		decodeAnthropic(c.t, events, &r)
	case APIResponses:
		decodeResponses(c.t, events, &r)
	case APIChat:
		decodeChat(c.t, events, &r)
	case APIGemini:
		decodeGemini(c.t, events, &r)
	}
	return r
}

func unmarshal(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m), s)
	return m
}

func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}

func decodeAnthropic(t *testing.T, events []sseEvent, r *reply) {
	t.Helper()
	require.NotEmpty(t, events)
	partial := map[int]*strings.Builder{}
	kinds := map[int]string{}
	calls := map[int]*gotCall{}
	var order []int
	for i, ev := range events {
		m := unmarshal(t, ev.Data)
		require.Equal(t, ev.Name, m["type"], "event: line must match data.type")
		if i == 0 {
			require.Equal(t, "message_start", ev.Name)
			u := obj(obj(m["message"])["usage"])
			r.Usage.InputTokens = num(u["input_tokens"]) + num(u["cache_read_input_tokens"])
			r.Usage.CachedTokens = num(u["cache_read_input_tokens"])
		}
		idx := num(m["index"])
		switch ev.Name {
		case "content_block_start":
			cb := obj(m["content_block"])
			kinds[idx] = str(cb["type"])
			partial[idx] = &strings.Builder{}
			if kinds[idx] == "tool_use" {
				calls[idx] = &gotCall{Name: str(cb["name"]), ID: str(cb["id"])}
				order = append(order, idx)
			}
		case "content_block_delta":
			d := obj(m["delta"])
			switch str(d["type"]) {
			case "text_delta":
				require.Equal(t, "text", kinds[idx])
				r.Text += str(d["text"])
				r.Deltas++
			case "input_json_delta":
				require.Equal(t, "tool_use", kinds[idx])
				partial[idx].WriteString(str(d["partial_json"]))
			default:
				t.Fatalf("unknown delta %v", d)
			}
		case "content_block_stop":
			if kinds[idx] == "tool_use" {
				calls[idx].Args = unmarshal(t, partial[idx].String())
			}
		case "message_delta":
			r.Stop = str(obj(m["delta"])["stop_reason"])
			r.Usage.OutputTokens = num(obj(m["usage"])["output_tokens"])
		}
	}
	require.Equal(t, "message_stop", events[len(events)-1].Name)
	for _, i := range order {
		r.Calls = append(r.Calls, *calls[i])
	}
}

func decodeResponses(t *testing.T, events []sseEvent, r *reply) {
	t.Helper()
	require.NotEmpty(t, events)
	require.Equal(t, "response.created", events[0].Name)
	args := map[string]*strings.Builder{}
	for i, ev := range events {
		m := unmarshal(t, ev.Data)
		require.Equal(t, ev.Name, m["type"])
		require.Equal(t, i, num(m["sequence_number"]))
		switch ev.Name {
		case "response.output_text.delta":
			r.Text += str(m["delta"])
			r.Deltas++
		case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
			id := str(m["item_id"])
			if args[id] == nil {
				args[id] = &strings.Builder{}
			}
			args[id].WriteString(str(m["delta"]))
		case "response.output_item.done":
			item := obj(m["item"])
			switch str(item["type"]) {
			case "function_call":
				require.Equal(t, str(item["arguments"]), args[str(item["id"])].String(), "deltas add up to the arguments")
				r.Calls = append(r.Calls, gotCall{Name: str(item["name"]), Args: unmarshal(t, str(item["arguments"])), ID: str(item["call_id"])})
			case "custom_tool_call":
				require.Equal(t, str(item["input"]), args[str(item["id"])].String())
				r.Calls = append(r.Calls, gotCall{Name: str(item["name"]), Input: str(item["input"]), ID: str(item["call_id"])})
			case "local_shell_call":
				r.Calls = append(r.Calls, gotCall{Name: "local_shell", Args: obj(item["action"]), ID: str(item["call_id"])})
			}
		case "response.completed":
			resp := obj(m["response"])
			require.Equal(t, "completed", resp["status"])
			decodeResponsesUsage(obj(resp["usage"]), r)
		}
	}
	require.Equal(t, "response.completed", events[len(events)-1].Name)
}

func decodeResponsesUsage(u map[string]any, r *reply) {
	r.Usage = Usage{
		InputTokens: num(u["input_tokens"]), OutputTokens: num(u["output_tokens"]),
		CachedTokens:    num(obj(u["input_tokens_details"])["cached_tokens"]),
		ReasoningTokens: num(obj(u["output_tokens_details"])["reasoning_tokens"]),
	}
}

func decodeChat(t *testing.T, events []sseEvent, r *reply) {
	t.Helper()
	require.NotEmpty(t, events)
	require.Equal(t, "[DONE]", events[len(events)-1].Data)
	type acc struct {
		name, id string
		args     strings.Builder
	}
	var calls []*acc
	for _, ev := range events[:len(events)-1] {
		require.Empty(t, ev.Name, "chat completions sends data-only events")
		m := unmarshal(t, ev.Data)
		require.Equal(t, "chat.completion.chunk", m["object"])
		if u := obj(m["usage"]); u != nil {
			r.Usage = Usage{InputTokens: num(u["prompt_tokens"]), OutputTokens: num(u["completion_tokens"]),
				CachedTokens:    num(obj(u["prompt_tokens_details"])["cached_tokens"]),
				ReasoningTokens: num(obj(u["completion_tokens_details"])["reasoning_tokens"])}
		}
		for _, ch := range list(m["choices"]) {
			d := obj(obj(ch)["delta"])
			if s := str(d["content"]); s != "" {
				r.Text += s
				r.Deltas++
			}
			for _, tc := range list(d["tool_calls"]) {
				tcm := obj(tc)
				i := num(tcm["index"])
				if i == len(calls) {
					calls = append(calls, &acc{})
				}
				require.Less(t, i, len(calls))
				if id := str(tcm["id"]); id != "" {
					calls[i].id = id
					calls[i].name = str(obj(tcm["function"])["name"])
				}
				calls[i].args.WriteString(str(obj(tcm["function"])["arguments"]))
			}
			if f := str(obj(ch)["finish_reason"]); f != "" {
				r.Stop = f
			}
		}
	}
	for _, c := range calls {
		r.Calls = append(r.Calls, gotCall{Name: c.name, ID: c.id, Args: unmarshal(t, c.args.String())})
	}
}

func decodeGemini(t *testing.T, events []sseEvent, r *reply) {
	t.Helper()
	require.NotEmpty(t, events)
	for _, ev := range events {
		require.Empty(t, ev.Name)
		decodeGeminiChunk(t, unmarshal(t, ev.Data), r)
	}
	require.Equal(t, "STOP", r.Stop)
}

func decodeGeminiChunk(t *testing.T, m map[string]any, r *reply) {
	t.Helper()
	for _, cand := range list(m["candidates"]) {
		for _, part := range list(obj(obj(cand)["content"])["parts"]) {
			p := obj(part)
			if s := str(p["text"]); s != "" {
				r.Text += s
				r.Deltas++
			}
			if fc := obj(p["functionCall"]); fc != nil {
				r.Calls = append(r.Calls, gotCall{Name: str(fc["name"]), Args: obj(fc["args"])})
			}
		}
		if f := str(obj(cand)["finishReason"]); f != "" {
			r.Stop = f
		}
	}
	if u := obj(m["usageMetadata"]); u != nil {
		r.Usage = Usage{InputTokens: num(u["promptTokenCount"]), OutputTokens: num(u["candidatesTokenCount"]) + num(u["thoughtsTokenCount"]),
			CachedTokens: num(u["cachedContentTokenCount"]), ReasoningTokens: num(u["thoughtsTokenCount"])}
		require.Equal(t, r.Usage.Total(), num(u["totalTokenCount"]))
	}
}

// decodeWhole decodes a non-streaming answer.
func (c client) decodeWhole(m map[string]any, r *reply) {
	t := c.t
	t.Helper()
	switch c.api {
	case APIAnthropic:
		require.Equal(t, "message", m["type"])
		for _, b := range list(m["content"]) {
			bm := obj(b)
			switch str(bm["type"]) {
			case "text":
				r.Text += str(bm["text"])
			case "tool_use":
				r.Calls = append(r.Calls, gotCall{Name: str(bm["name"]), Args: obj(bm["input"]), ID: str(bm["id"])})
			}
		}
		u := obj(m["usage"])
		r.Usage = Usage{InputTokens: num(u["input_tokens"]) + num(u["cache_read_input_tokens"]), OutputTokens: num(u["output_tokens"]), CachedTokens: num(u["cache_read_input_tokens"])}
		r.Stop = str(m["stop_reason"])
	case APIResponses:
		require.Equal(t, "response", m["object"])
		for _, it := range list(m["output"]) {
			im := obj(it)
			switch str(im["type"]) {
			case "message":
				for _, ct := range list(im["content"]) {
					r.Text += str(obj(ct)["text"])
				}
			case "function_call":
				r.Calls = append(r.Calls, gotCall{Name: str(im["name"]), Args: unmarshal(t, str(im["arguments"]))})
			case "custom_tool_call":
				r.Calls = append(r.Calls, gotCall{Name: str(im["name"]), Input: str(im["input"])})
			}
		}
		decodeResponsesUsage(obj(m["usage"]), r)
	case APIChat:
		require.Equal(t, "chat.completion", m["object"])
		ch := obj(list(m["choices"])[0])
		msg := obj(ch["message"])
		r.Text = str(msg["content"])
		for _, tc := range list(msg["tool_calls"]) {
			f := obj(obj(tc)["function"])
			r.Calls = append(r.Calls, gotCall{Name: str(f["name"]), Args: unmarshal(t, str(f["arguments"]))})
		}
		r.Stop = str(ch["finish_reason"])
		u := obj(m["usage"])
		r.Usage = Usage{InputTokens: num(u["prompt_tokens"]), OutputTokens: num(u["completion_tokens"])}
	case APIGemini:
		decodeGeminiChunk(t, m, r)
	}
}
