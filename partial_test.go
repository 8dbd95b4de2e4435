package harness

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/logger"
	"github.com/agentharness/harness/process"
)

// TestStderrTailStartsAtALine: a fatal error's stderr tail is the last 8
// KiB from the start of a line (or a word): a cut through a secret would
// leave a piece the session log's redactor no longer knows
// ("-ant-api03-…" of an Anthropic key).
func TestStderrTailStartsAtALine(t *testing.T) {
	const key, before = "sk-ant-api03-AbCdEf0123456789_xyz-QRSTUV", "request failed with key "
	keyLine := before + key + " end\n"
	for j := -len(before); j <= len(key); j++ {
		// The 8 KiB cut falls j bytes into the key (before it when j < 0).
		restLen := stderrTailBytes + len(before) + j - len(keyLine)
		rest := strings.Repeat("x", restLen-1) + "\n"
		stderr := "head line\n" + keyLine + rest
		r := &Run{}
		tail := r.partial(process.Outcome{StderrTail: []byte(stderr)}).StderrTail
		require.LessOrEqual(t, len(tail), stderrTailBytes)
		require.True(t, strings.HasSuffix(tail, rest), "the last line is whole")
		got := logger.NewRedactor(nil).RedactString(tail)
		require.NotContains(t, got, "AbCdEf0123", "cut %d into the key: a piece survives", j)
	}
}
