package harness_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/harnesstest"
)

// TestParseSessionRecord: the native lines of each captured live session
// (Claude Code over stream-json, Codex over app-server: two turns, an
// interrupt, permission requests allowed and denied), parsed with what
// the session's stream recorded of its turns, give that stream again —
// the same events in the same order, apart from times and the run id.
func TestParseSessionRecord(t *testing.T) {
	for _, tc := range []struct{ name, native, stream, protocol string }{
		{"claude-two-turns", "adapters/claude/testdata/live/two-turns.jsonl", "adapters/claude/testdata/live/two-turns.golden.ndjson", harness.ProtocolStreamJSON},
		{"claude-interrupt", "adapters/claude/testdata/live/interrupt.jsonl", "adapters/claude/testdata/live/interrupt.golden.ndjson", harness.ProtocolStreamJSON},
		{"claude-ask", "adapters/claude/testdata/live/ask.jsonl", "adapters/claude/testdata/live/ask.golden.ndjson", harness.ProtocolStreamJSON},
		{"codex-converse", "adapters/codex/testdata/appserver/converse.jsonl", "adapters/codex/testdata/appserver/converse.live.ndjson", harness.ProtocolAppServer},
		{"codex-interrupt", "adapters/codex/testdata/appserver/interrupt.jsonl", "adapters/codex/testdata/appserver/interrupt.live.ndjson", harness.ProtocolAppServer},
		{"codex-ask", "adapters/codex/testdata/appserver/ask.jsonl", "adapters/codex/testdata/appserver/ask.live.ndjson", harness.ProtocolAppServer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			recorded, err := os.ReadFile(filepath.FromSlash(tc.stream))
			require.NoError(t, err)
			recorded, _, _ = bytes.Cut(recorded, []byte("--- stdin\n"))
			rec, err := harness.ReadSessionRecord(bytes.NewReader(recorded))
			require.NoError(t, err)
			require.NotNil(t, rec)
			capture, err := os.ReadFile(filepath.FromSlash(tc.native))
			require.NoError(t, err)
			var native bytes.Buffer
			for _, line := range bytes.SplitAfter(capture, []byte("\n")) {
				if !bytes.HasPrefix(line, []byte(">>>")) { // the test's directives, not the agent's lines
					native.Write(line)
				}
			}
			var out bytes.Buffer
			enc := event.NewEncoder(&out)
			agent := strings.Split(tc.name, "-")[0]
			_, err = harness.Parse(context.Background(), &native, agent, func(ev event.Event) { enc.Encode(ev) },
				harness.ParseOptions{Protocol: tc.protocol, Session: rec})
			require.NoError(t, err)
			adaptertest.CheckStream(t, out.Bytes())
			require.Equal(t, harnesstest.ReparseParts(t, recorded), harnesstest.ReparseParts(t, out.Bytes()))
		})
	}
}
