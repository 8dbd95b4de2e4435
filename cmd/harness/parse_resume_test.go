package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// resumedCapture is an ACP agent's stdout for a run that continued
// session sess-1 by session/load: the conversation so far replayed, then
// the answer that opened it (naming no session), then the prompt's turn.
const resumedCapture = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"the old answer"}}}}
{"jsonrpc":"2.0","id":2,"result":{"modes":{"currentModeId":"default","availableModes":[{"id":"default","name":"Default"}]}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"the new answer"}}}}
{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}
`

// TestParseResumedACPCapture: parse --protocol acp --resume maps the
// capture of a resumed run as the run did: its session_start names the
// session, the replay is not the run's, and every line is understood;
// without --resume the opening's answer is unparsed and the session
// unnamed. --resume with another protocol is a usage error.
func TestParseResumedACPCapture(t *testing.T) {
	isolate(t)
	r := invoke(t, resumedCapture, "parse", "--agent", "claude", "--protocol", "acp", "--resume", "sess-1")
	require.Equal(t, 0, r.code, r.stderr)
	first, _, _ := strings.Cut(r.stdout, "\n")
	require.Contains(t, first, `"type":"session_start"`)
	require.Contains(t, first, `"session_id":"sess-1"`)
	require.NotContains(t, r.stdout, "the old answer")
	require.Contains(t, r.stdout, `"text":"the new answer"`)
	require.Contains(t, r.stdout, `"unparsed_lines":0`)

	r = invoke(t, resumedCapture, "parse", "--agent", "claude", "--protocol", "acp")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, "the old answer")
	require.NotContains(t, r.stdout, `"session_id":"sess-1"`)
	require.Contains(t, r.stdout, `"unparsed_lines":1`)

	r = invoke(t, "", "parse", "--agent", "claude", "--resume", "sess-1")
	require.Equal(t, 2, r.code)
	require.Equal(t, "harness: parse: --resume is for --protocol acp, whose answer that opens a resumed session names none\n", r.stderr)
}
