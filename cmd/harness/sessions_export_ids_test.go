package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSessionsExportOTLPIsStable: two otlp-json exports of a run are the
// same bytes, trace and span ids included, so that importing both keeps
// one trace. Each had new random ids.
func TestSessionsExportOTLPIsStable(t *testing.T) {
	_, run, _ := loggedRun(t)
	for _, content := range [][]string{nil, {"--otlp-content"}} {
		args := append([]string{"sessions", "export", "--format", "otlp-json", run}, content...)
		first := invoke(t, "", args...)
		require.Zero(t, first.code, first.stderr)
		require.Contains(t, first.stdout, `"traceId"`)
		again := invoke(t, "", args...)
		require.Zero(t, again.code, again.stderr)
		require.Equal(t, first.stdout, again.stdout, "%v", content)
	}
}
