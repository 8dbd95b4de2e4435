package claude

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

func only[T event.Body](bodies []event.Body) []T {
	var out []T
	for _, b := range bodies {
		if v, ok := b.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

const (
	msgStart    = `{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":5,"output_tokens":1}}},"parent_tool_use_id":null}`
	textStart   = `{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}},"parent_tool_use_id":null}`
	delta1      = `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}},"parent_tool_use_id":null}`
	delta2      = `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo \"x\""}},"parent_tool_use_id":null}`
	textFull    = `{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"Hello \"x\""}],"usage":{"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":5,"output_tokens":1}},"parent_tool_use_id":null}`
	textStop    = `{"type":"stream_event","event":{"type":"content_block_stop","index":0},"parent_tool_use_id":null}`
	toolStartEv = `{"type":"stream_event","event":{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}},"parent_tool_use_id":null}`
	toolDelta1  = `{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"command\":"}},"parent_tool_use_id":null}`
	toolDelta2  = `{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"ls -la\"}"}},"parent_tool_use_id":null}`
	toolFull    = `{"type":"assistant","message":{"id":"msg_1","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls -la"}}],"usage":{"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":5,"output_tokens":1}},"parent_tool_use_id":null}`
	toolStop    = `{"type":"stream_event","event":{"type":"content_block_stop","index":1},"parent_tool_use_id":null}`
	msgDelta    = `{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}},"parent_tool_use_id":null}`
	msgStop     = `{"type":"stream_event","event":{"type":"message_stop"},"parent_tool_use_id":null}`
)

func TestPartialMessages(t *testing.T) {
	t.Parallel()
	t.Run("deltas-then-complete-block-emit-both-once", func(t *testing.T) {
		t.Parallel()
		out := adaptertest.Bodies(newParser(), msgStart, textStart, delta1, delta2, textFull, textStop, msgDelta, msgStop)
		deltas := only[*event.TextDelta](out)
		require.Len(t, deltas, 2)
		require.Equal(t, "msg_1", deltas[0].MessageID)
		msgs := only[*event.Message](out)
		require.Len(t, msgs, 1)
		require.Equal(t, deltas[0].Text+deltas[1].Text, msgs[0].Text)
		require.Equal(t, "msg_1", msgs[0].MessageID)
	})
	// A tool is started once, whether its assistant line comes before its
	// content_block_stop or after it (then from the streamed input).
	for name, lines := range map[string][]string{
		"tool-started-once-from-assistant-line":             {msgStart, toolStartEv, toolDelta1, toolDelta2, toolFull, toolStop, msgStop},
		"tool-started-at-block-stop-without-assistant-line": {msgStart, toolStartEv, toolDelta1, toolDelta2, toolStop, toolFull, msgStop},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			starts := only[*event.ToolStart](adaptertest.Bodies(newParser(), lines...))
			require.Len(t, starts, 1)
			require.Equal(t, "toolu_1", starts[0].CallID)
			require.Equal(t, event.KindShell, starts[0].Kind)
			require.Equal(t, "ls -la", starts[0].Command)
			require.JSONEq(t, `{"command":"ls -la"}`, string(starts[0].Input))
		})
	}
	t.Run("one-usage-per-call-with-its-final-counts", func(t *testing.T) {
		t.Parallel()
		out := adaptertest.Bodies(newParser(), msgStart, textStart, delta1, textFull, textStop, toolFull, msgDelta, msgStop)
		us := only[*event.Usage](out)
		require.Len(t, us, 1)
		require.Equal(t, event.Usage{InputTokens: 10, OutputTokens: 30, CacheReadTokens: 100, CacheWriteTokens: 5}, *us[0])
	})
	t.Run("cut-stream-keeps-deltas-but-no-message", func(t *testing.T) {
		t.Parallel()
		out := adaptertest.Bodies(newParser(), msgStart, textStart, delta1, delta2)
		require.Empty(t, only[*event.Message](out))
		require.Len(t, only[*event.TextDelta](out), 2)
	})
	t.Run("stopped-block-without-assistant-line-is-assembled-at-message-stop", func(t *testing.T) {
		t.Parallel()
		out := adaptertest.Bodies(newParser(), msgStart, textStart, delta1, delta2, textStop, msgDelta, msgStop)
		msgs := only[*event.Message](out)
		require.Len(t, msgs, 1)
		require.Equal(t, `Hello "x"`, msgs[0].Text)
	})
	t.Run("abandoned-block-is-no-message-and-its-call-counts-as-sent", func(t *testing.T) {
		t.Parallel()
		// Claude's idle timeout: it stops the block itself, repeats the
		// snapshot in a message_delta and names the abandoned blocks.
		abandon := `{"type":"stream_event","event":{"type":"message_stop"},"parent_tool_use_id":null,"api_message_id":"msg_1","abandoned_blocks":{"api_message_id":"msg_1","from_block_index":0}}`
		snapshot := `{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":null},"usage":{"input_tokens":10,"output_tokens":1}},"parent_tool_use_id":null}`
		out := adaptertest.Bodies(newParser(), msgStart, textStart, delta1, delta2, toolStartEv, toolDelta1,
			textStop, toolStop, snapshot, abandon)
		require.Empty(t, only[*event.Message](out))
		// The call was charged: its counts as message_start and the
		// message_delta give them (msgStart's cache, the snapshot's input
		// and output).
		us := only[*event.Usage](out)
		require.Len(t, us, 1)
		require.Equal(t, event.Usage{InputTokens: 10, OutputTokens: 1, CacheReadTokens: 100, CacheWriteTokens: 5}, *us[0])
		require.Empty(t, only[*event.ToolStart](out), "a tool block cut short never ran")
		require.Len(t, only[*event.TextDelta](out), 2)
	})
	t.Run("thinking-deltas-and-block", func(t *testing.T) {
		t.Parallel()
		out := adaptertest.Bodies(newParser(), msgStart,
			`{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}}`,
			`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm "}}}`,
			`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"ok"}}}`,
			`{"type":"assistant","message":{"id":"msg_1","content":[{"type":"thinking","thinking":"hmm ok","signature":"s"}]}}`,
			msgStop)
		require.Len(t, only[*event.ReasoningDelta](out), 2)
		rs := only[*event.Reasoning](out)
		require.Len(t, rs, 1)
		require.Equal(t, "hmm ok", rs[0].Text)
	})
}

// TestNestedReadsKeepKeyRules: the objects of a stream event keep the
// key rules they had when apply walked them with jsonscan.Each: in a
// content block and a message the first of duplicate keys wins, a usage
// object's last number wins and other values are not counts, and of
// duplicate objects the last wins as a whole. Spaces are valid JSON.
func TestNestedReadsKeepKeyRules(t *testing.T) {
	t.Parallel()
	start := `{"type":"stream_event","event":{"type":"message_start","message":{"id":"m0"},"message":{"id":"m1","id":"m2","usage":{"input_tokens":7,"input_tokens":"x","cache_read_input_tokens":3,"input_tokens":8},"usage":{"input_tokens":99}}}}`
	spaced := `{"type":"stream_event","event":{"type":"message_start","message":{ "id" : "m1" , "usage":{"input_tokens":8,"cache_read_input_tokens":3}, "id":"m2"}}}`
	block := `{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text"},"content_block":{ "type" : "tool_use" , "id":"t1","type":"text","name":"Bash","id":"t2" }}}`
	input := `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\":\"ls\"}"}}}`
	stop := `{"type":"stream_event","event":{"type":"content_block_stop","index":0}}`
	delta := `{"type":"stream_event","event":{"type":"message_delta","usage":{"output_tokens":1000},"usage":{"output_tokens":5,"output_tokens":null,"output_tokens_details":{"thinking_tokens":2,"thinking_tokens":4}}}}`
	for _, first := range []string{start, spaced} {
		out := adaptertest.Bodies(newParser(), first, block, input, stop, delta, msgStop)
		ts := only[*event.ToolStart](out)
		require.Len(t, ts, 1)
		require.Equal(t, "t1", ts[0].CallID)
		require.Equal(t, "Bash", ts[0].Name)
		require.Equal(t, "ls", ts[0].Command)
		us := only[*event.Usage](out)
		require.Len(t, us, 1)
		require.Equal(t, event.Usage{InputTokens: 8, CacheReadTokens: 3, OutputTokens: 5, ReasoningTokens: 2}, *us[0])
	}
}

func TestNonPartialUsageDedup(t *testing.T) {
	t.Parallel()
	line := func(block string) string {
		return `{"type":"assistant","message":{"id":"msg_9","content":[` + block + `],"usage":{"input_tokens":4,"cache_creation_input_tokens":5355,"cache_read_input_tokens":11292,"output_tokens":2}},"parent_tool_use_id":null}`
	}
	out := adaptertest.Bodies(newParser(), line(`{"type":"text","text":"a"}`), line(`{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/x"}}`))
	us := only[*event.Usage](out)
	require.Len(t, us, 1)
	// output_tokens on these lines is message_start's placeholder, not a count.
	require.Equal(t, event.Usage{InputTokens: 4, CacheReadTokens: 11292, CacheWriteTokens: 5355}, *us[0])
	ts := only[*event.ToolStart](out)
	require.Len(t, ts, 1)
	require.Equal(t, "/x", ts[0].Path)
	require.Equal(t, event.KindRead, ts[0].Kind)
}

// withResult adds a tool_use_result (raw JSON) to a user line.
func withResult(line, toolUseResult string) string {
	return line[:len(line)-1] + `,"tool_use_result":` + toolUseResult + `}`
}

func TestToolResults(t *testing.T) {
	t.Parallel()
	use := func(id, name, input string) string {
		return `{"type":"assistant","message":{"id":"m_` + id + `","content":[{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":` + input + `}]}}`
	}
	res := func(id, content string, isErr bool) string {
		e := "false"
		if isErr {
			e = "true"
		}
		return `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":` + content + `,"is_error":` + e + `}]}}`
	}
	cases := []struct {
		name   string
		lines  []string
		status string
		exit   *int
		kind   event.Kind
		diff   bool
	}{
		{"bash-exit-code-2", []string{use("b", "Bash", `{"command":"false"}`), res("b", `"Exit code 2\nboom"`, true)}, event.StatusError, event.Int(2), event.KindShell, false},
		{"bash-ok-has-no-invented-exit-code", []string{use("b", "Bash", `{"command":"true"}`), res("b", `"done"`, false)}, event.StatusOK, nil, event.KindShell, false},
		{"write-not-granted-is-denied", []string{use("w", "Write", `{"file_path":"/a","content":"x"}`), res("w", `"Claude requested permissions to write to /a, but you haven't granted it yet."`, true)}, event.StatusDenied, nil, event.KindWrite, false},
		{"edit-ok-with-original-file-carries-diff", []string{use("e", "Edit", `{"file_path":"/a.go","old_string":"x","new_string":"y"}`),
			withResult(res("e", `[{"type":"text","text":"updated"}]`, false), `{"filePath":"/a.go","originalFile":"w\nx\nz\n"}`)}, event.StatusOK, nil, event.KindEdit, true},
		{"edit-ok-without-the-file-has-no-diff", []string{use("e", "Edit", `{"file_path":"/a.go","old_string":"x","new_string":"y"}`), res("e", `[{"type":"text","text":"updated"}]`, false)}, event.StatusOK, nil, event.KindEdit, false},
		{"edit-error-has-no-diff", []string{use("e", "Edit", `{"file_path":"/a.go","old_string":"x","new_string":"y"}`), res("e", `"<tool_use_error>String to replace not found in file.</tool_use_error>"`, true)}, event.StatusError, nil, event.KindEdit, false},
		{"result-without-tool-use", []string{res("zz", `"?"`, false)}, event.StatusOK, nil, event.KindOther, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ends := only[*event.ToolEnd](adaptertest.Bodies(newParser(), c.lines...))
			require.Len(t, ends, 1)
			require.Equal(t, c.status, ends[0].Status)
			require.Equal(t, c.exit, ends[0].ExitCode)
			require.Equal(t, c.kind, ends[0].Kind)
			require.NotEmpty(t, ends[0].Name)
			require.Equal(t, c.diff, ends[0].Diff != "")
			if c.status == event.StatusOK && (c.kind == event.KindWrite || c.kind == event.KindEdit) && !c.diff {
				require.Equal(t, event.DiffSkippedUnknown, ends[0].DiffSkipped)
			} else {
				require.Empty(t, ends[0].DiffSkipped)
			}
			if c.diff {
				require.Equal(t, []string{"/a.go"}, ends[0].Paths)
				require.Equal(t, "--- a/a.go\n+++ b/a.go\n@@ -1,3 +1,3 @@\n w\n-x\n+y\n z\n", ends[0].Diff)
			}
		})
	}
}

func TestResult(t *testing.T) {
	t.Parallel()
	t.Run("success-subtype-with-is_error-is-an-error", func(t *testing.T) {
		t.Parallel()
		out := adaptertest.Bodies(newParser(), `{"duration_api_ms":1,"session_id":"s1","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0},"is_error":true,"num_turns":1,"subtype":"success","api_error_status":529,"result":"API Error: 529 Overloaded","type":"result","duration_ms":686}`)
		errs := only[*event.Error](out)
		require.Len(t, errs, 1)
		require.Equal(t, event.ErrAgentError, errs[0].Code)
		require.Equal(t, event.ClassOverloaded, errs[0].Class)
		require.Equal(t, 529, errs[0].Status)
		require.True(t, errs[0].Fatal, "the terminal error of a failed run")
		require.NotNil(t, errs[0].Partial)
		rs := only[*event.Result](out)
		require.Len(t, rs, 1)
		require.Equal(t, event.ResultError, rs[0].Status)
		require.Equal(t, int64(686), rs[0].DurationMS)
		require.Empty(t, rs[0].Text, "the error message is the error event's, not the answer")
		require.Equal(t, "s1", rs[0].SessionID)
		require.NotNil(t, rs[0].CostUSD)
	})
	t.Run("max-turns-message-from-errors", func(t *testing.T) {
		t.Parallel()
		out := adaptertest.Bodies(newParser(), `{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":11,"total_cost_usd":0.4121,"usage":{"input_tokens":120,"cache_creation_input_tokens":8000,"cache_read_input_tokens":90000,"output_tokens":2100,"output_tokens_details":{"thinking_tokens":700}},"errors":["Reached maximum number of turns (11)"],"session_id":"s"}`)
		errs := only[*event.Error](out)
		require.Len(t, errs, 1)
		require.Equal(t, "Reached maximum number of turns (11)", errs[0].Message)
		r := only[*event.Result](out)[0]
		require.Equal(t, event.ResultError, r.Status)
		require.Equal(t, 11, r.NumTurns)
		require.Equal(t, 0.4121, *r.CostUSD)
		require.Equal(t, event.Usage{InputTokens: 120, OutputTokens: 2100, CacheReadTokens: 90000, CacheWriteTokens: 8000, ReasoningTokens: 700}, r.Usage)
	})
	t.Run("num-turns-counts-model-calls-not-parallel-results", func(t *testing.T) {
		t.Parallel()
		// One call with two parallel tools, then a last one: Claude says 3
		// turns (one more per further tool result); the model was called twice.
		asst := func(id, block string) string {
			return `{"type":"assistant","message":{"id":"` + id + `","model":"m","role":"assistant","content":[` + block + `],"usage":{"input_tokens":1,"output_tokens":1}},"parent_tool_use_id":null,"session_id":"s"}`
		}
		lines := []string{
			asst("msg_1", `{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"true"}}`),
			asst("msg_1", `{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"true"}}`),
			`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}`,
			`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"ok"}]}}`,
			asst("msg_2", `{"type":"text","text":"done"}`),
		}
		r := only[*event.Result](adaptertest.Bodies(newParser(), append(lines,
			`{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s","num_turns":3}`)...))[0]
		require.Equal(t, 2, r.NumTurns)
		// begun_message_ids adds the calls the lines did not show (one
		// abandoned before its first line, say), each once.
		r = only[*event.Result](adaptertest.Bodies(newParser(), append(lines,
			`{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s","num_turns":3,"begun_message_ids":["msg_1","msg_0","msg_2","msg_0"]}`)...))[0]
		require.Equal(t, 3, r.NumTurns)
	})
	t.Run("success", func(t *testing.T) {
		t.Parallel()
		out := adaptertest.Bodies(newParser(), `{"type":"result","subtype":"success","is_error":false,"result":"4","session_id":"s","num_turns":1}`)
		require.Empty(t, only[*event.Error](out))
		r := only[*event.Result](out)[0]
		require.Equal(t, event.ResultSuccess, r.Status)
		require.Equal(t, "4", r.Text)
		require.Nil(t, r.CostUSD)
	})
}

func TestKnownAndUnknownLines(t *testing.T) {
	t.Parallel()
	for line, known := range map[string]bool{
		`{"type":"system","subtype":"compact_boundary","compact_metadata":{"trigger":"auto"}}`: true,
		`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}`:                   true,
		`{"type":"brand_new_thing"}`: false,
		`{"no_type":1}`:              false,
		`not json`:                   false,
		`{"type":"result"`:           false,
		``:                           false,
		`[1,2]`:                      false,
	} {
		_, got := newParser().Parse(nil, []byte(line))
		require.Equal(t, known, got, "line %q", line)
	}
}

func TestSessionStartAndRetry(t *testing.T) {
	t.Parallel()
	out := adaptertest.Bodies(newParser(), `{"type":"system","subtype":"init","cwd":"/w","session_id":"sid","tools":["Bash","Read"],"model":"claude-opus-4-5","claude_code_version":"2.1.7"}`,
		`{"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,"retry_delay_ms":1190,"error_status":529,"error":"overloaded_error"}`)
	ss := only[*event.SessionStart](out)
	require.Len(t, ss, 1)
	require.Equal(t, event.SessionStart{Agent: "claude", AgentVersion: "2.1.7", Model: "claude-opus-4-5", SessionID: "sid", Cwd: "/w", Tools: []string{"Bash", "Read"}}, *ss[0])
	ws := only[*event.Warning](out)
	require.Len(t, ws, 1)
	require.Equal(t, event.WarnAgentRetry, ws[0].Code)
	require.Contains(t, ws[0].Message, "529")
	require.Contains(t, ws[0].Message, "retry 2 of 10")
}

func TestToolKinds(t *testing.T) {
	t.Parallel()
	for name, kind := range map[string]event.Kind{
		"Bash": event.KindShell, "Read": event.KindRead, "Write": event.KindWrite, "Edit": event.KindEdit,
		"MultiEdit": event.KindEdit, "NotebookEdit": event.KindEdit, "Glob": event.KindSearch, "Grep": event.KindSearch,
		"LS": event.KindSearch, "WebFetch": event.KindWeb, "WebSearch": event.KindWeb, "mcp__gh__x": event.KindMCP,
		"TodoWrite": event.KindTodo, "Task": event.KindTask, "Agent": event.KindTask, "Skill": event.KindOther,
	} {
		require.Equal(t, kind, toolKind(name), name)
	}
}

func TestUserText(t *testing.T) {
	t.Parallel()
	out := adaptertest.Bodies(newParser(), `{"type":"user","message":{"role":"user","content":"echoed prompt"},"parent_tool_use_id":null}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"skill body"}]},"isMeta":true}`)
	msgs := only[*event.Message](out)
	require.Len(t, msgs, 1)
	require.Equal(t, event.Message{Role: event.RoleUser, Text: "echoed prompt"}, *msgs[0])
}

// TestToolResultBlocksReadAsGjson: user lines are read with jsonscan as
// gjson read them: the first of duplicate members, strings only where a
// string is asked for, is_error as gjson's Bool, an object's values as
// blocks, text blocks of an array content joined, escapes decoded (each
// case's expectation is what the gjson reader gave).
func TestToolResultBlocksReadAsGjson(t *testing.T) {
	t.Parallel()
	use := `{"type":"assistant","message":{"id":"m","content":[{"type":"tool_use","id":"T","name":"Bash","input":{"command":"x"}}]}}`
	user := func(content string) string {
		return `{"type":"user","message":{"role":"user","content":` + content + `}}`
	}
	cases := []struct {
		name, line     string
		id, status     string
		output, prompt string
	}{
		{"escapes", user(`[{"tool_use_id":"T","type":"tool_result","content":"out \u0041\n\"q\"","is_error":false}]`), "T", event.StatusOK, "out A\n\"q\"", ""},
		{"first-type-wins", user(`[{"tool_use_id":"T","type":"tool_result","type":"text","content":"a","is_error":true}]`), "T", event.StatusError, "a", ""},
		{"first-id-wins-and-text-blocks-joined", user(`[{"tool_use_id":"T","tool_use_id":"U","type":"tool_result","content":[{"type":"text","text":"x"},{"type":"image"},{"text":"y","type":"text"},"str",5]}]`), "T", event.StatusOK, "x\ny", ""},
		{"object-content-values", user(`{"a":{"tool_use_id":"T","type":"tool_result","content":"obj"}}`), "T", event.StatusOK, "obj", ""},
		{"is-error-string-true-is-true", user(`[{"tool_use_id":"T","type":"tool_result","content":"Exit code 3\nboom","is_error":"true"}]`), "T", event.StatusError, "Exit code 3\nboom", ""},
		{"is-error-one-is-true", user(`[{"tool_use_id":"T","type":"tool_result","content":"Exit code 3\nboom","is_error":1}]`), "T", event.StatusError, "Exit code 3\nboom", ""},
		{"numeric-id-is-no-id", user(`[{"tool_use_id":5,"type":"tool_result","content":"o"}]`), "", event.StatusOK, "o", ""},
		{"null-content", user(`[{"tool_use_id":"T","type":"tool_result","content":null}]`), "T", event.StatusOK, "", ""},
		{"spaces", user(`[ {"tool_use_id" : "T" , "type" : "tool_result" , "content" : [ {"type":"text","text":"sp"} ] } ]`), "T", event.StatusOK, "sp", ""},
		{"string-content-is-a-prompt", user(`"plain \"user\" text"`), "", "", "", "plain \"user\" text"},
		{"first-content-wins", `{"type":"user","message":{"role":"user","content":"first","content":[{"type":"text","text":"t"}]}}`, "", "", "", "first"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := adaptertest.Bodies(newParser(), use, c.line)
			ends, msgs := only[*event.ToolEnd](out), only[*event.Message](out)
			if c.prompt != "" {
				require.Len(t, msgs, 1)
				require.Equal(t, c.prompt, msgs[0].Text)
				require.Empty(t, ends)
				return
			}
			require.Len(t, ends, 1)
			require.Equal(t, c.id, ends[0].CallID)
			require.Equal(t, c.status, ends[0].Status)
			require.Equal(t, c.output, ends[0].Output)
		})
	}
}
