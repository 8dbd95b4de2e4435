package mcpserver

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
)

// maxArgInt is the largest whole-number argument a tool takes (2^53-1),
// the largest every JSON reader holds exactly. The SDK reads arguments as
// float64s before it decodes them into a tool's arguments: a number near
// 2^63, or 1e30, met an opaque Go decode error ("json: cannot unmarshal
// number 9223372036854776000 ... into Go struct field"), and a larger
// one was another number by then.
const maxArgInt = 1<<53 - 1

// intArg is a whole-number argument of a tool, and its unit ("" for a
// count).
type intArg struct{ name, unit string }

// intArgs are the whole-number arguments of each tool.
var intArgs = map[string][]intArg{
	"run_agent":  {{"idle_timeout_ms", "milliseconds"}, {"hard_timeout_ms", "milliseconds"}},
	"run_events": {{"after_seq", ""}, {"limit", ""}},
}

// checkIntArgs returns the tool error of a call to tool whose argument of
// intArgs is not null or a whole number from 0 to maxArgInt (one line,
// naming the argument and the range, as the tools' own argument errors),
// or nil.
func checkIntArgs(tool string, args []byte) *mcp.CallToolResult {
	want := intArgs[tool]
	if len(want) == 0 || !gjson.ValidBytes(args) {
		return nil
	}
	// The last of a repeated key, as the SDK's decoder takes it; no
	// copy of the arguments (a prompt may be 16 MiB).
	last := map[string]gjson.Result{}
	gjson.ParseBytes(args).ForEach(func(k, v gjson.Result) bool {
		for _, a := range want {
			if k.Str == a.name {
				last[a.name] = v
			}
		}
		return true
	})
	for _, a := range want {
		v, ok := last[a.name]
		if !ok || v.Type == gjson.Null {
			continue
		}
		raw := v.Raw
		switch {
		case v.Type != gjson.Number:
			raw = "(" + kind(v) + ")" // whose text may be long, or many lines
		case len(raw) > 40:
			raw = raw[:40] + "..."
		}
		if f, err := strconv.ParseFloat(v.Raw, 64); v.Type == gjson.Number && err == nil &&
			f == math.Trunc(f) && f >= 0 && f <= maxArgInt {
			continue
		}
		what := "a whole number"
		if a.unit != "" {
			what += " of " + a.unit
		}
		res, _, _ := errResult("%s: %s %s: want %s from 0 to %d", tool, a.name, raw, what, maxArgInt)
		return res
	}
	return nil
}

// kind names the JSON type of v, which is not a number.
func kind(v gjson.Result) string {
	switch {
	case v.Type == gjson.String:
		return "a string"
	case v.Type == gjson.True || v.Type == gjson.False:
		return "a boolean"
	case v.IsArray():
		return "an array"
	}
	return "an object"
}

// logLevels are the levels of logging/setLevel (RFC 5424's, as MCP names
// them).
var logLevels = map[mcp.LoggingLevel]bool{"debug": true, "info": true, "notice": true, "warning": true,
	"error": true, "critical": true, "alert": true, "emergency": true}

// refuse answers a request the SDK would serve wrongly, before it sees
// it: a tool's whole-number argument out of range (checkIntArgs), and a
// logging/setLevel to a level MCP does not have (Invalid params, as the
// spec says; the SDK took any string, and logged at no level then).
// Otherwise it returns nil, nil.
func refuse(method string, req mcp.Request) (mcp.Result, error) {
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParamsRaw:
		if res := checkIntArgs(p.Name, p.Arguments); res != nil {
			return res, nil
		}
	case *mcp.SetLoggingLevelParams:
		if method == "logging/setLevel" && !logLevels[p.Level] {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
				Message: fmt.Sprintf("invalid params: log level %q: want one of debug, info, notice, warning, error, critical, alert, emergency", p.Level)}
		}
	}
	return nil, nil
}

// withCode gives an error without a JSON-RPC code (code 0, which
// JSON-RPC does not have) the code Invalid request: the SDK's refusals
// of a request the session's state does not allow carry none (a second
// initialize; any request but ping before initialize, as MCP's
// lifecycle has it, which names no code). Other errors are returned as
// they are.
func withCode(err error) error {
	var we *jsonrpc.Error
	if err == nil || errors.As(err, &we) && we.Code != 0 {
		return err
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + err.Error()}
}

// withCodeMsg is withCode for a message the SDK writes, msg (JSON, and
// maybe a newline): the SDK refuses a request before initialize before
// any handler, so middleware, sees it. It returns the message to write
// instead, and false when msg is not an error answer with code 0.
func withCodeMsg(msg []byte) ([]byte, bool) {
	if c := gjson.GetBytes(msg, "error.code"); c.Type != gjson.Number || c.Raw != "0" {
		return msg, false
	}
	m, err := jsonrpc.DecodeMessage(bytes.TrimSpace(msg))
	res, ok := m.(*jsonrpc.Response)
	if err != nil || !ok || res.Error == nil {
		return msg, false
	}
	res.Error = withCode(res.Error)
	b, err := jsonrpc.EncodeMessage(res)
	if err != nil {
		return msg, false
	}
	if bytes.HasSuffix(msg, []byte("\n")) {
		b = append(b, '\n')
	}
	return b, true
}
