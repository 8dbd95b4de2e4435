package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOTLPErrorNamesItsSource: a bad otlp endpoint is told as coming
// from where it was given: the flag, the file and key, the variable.
// Before, otlp = "ftp://x" in harness.toml was reported as "--otlp: …",
// a flag nobody gave.
func TestOTLPErrorNamesItsSource(t *testing.T) {
	const why = `otlp endpoint "ftp://x": want http(s)://HOST:PORT`
	for _, tc := range []struct {
		name, toml, env, flag, want string
	}{
		{"flag", "", "", "ftp://x", "harness: --otlp: " + why + "\n"},
		{"file", "otlp = \"ftp://x\"\n", "", "", "harness: harness.toml: otlp: " + why + "\n"},
		{"HARNESS_OTLP", "", "HARNESS_OTLP", "", "harness: env HARNESS_OTLP: otlp: " + why + "\n"},
		{"OTEL", "", "OTEL_EXPORTER_OTLP_ENDPOINT", "", "harness: OTEL_EXPORTER_OTLP_ENDPOINT: " + why + "\n"},
	} {
		for _, dry := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/dry-run=%v", tc.name, dry), func(t *testing.T) {
				if tc.toml != "" {
					isolateWith(t, tc.toml)
				} else {
					isolate(t)
				}
				if tc.env != "" {
					t.Setenv(tc.env, "ftp://x")
				}
				args := []string{"run", "--agent", "nop", "-p", "x"}
				if tc.flag != "" {
					args = append(args, "--otlp", tc.flag)
				}
				if dry {
					args = append(args, "--dry-run")
				}
				r := invoke(t, "", args...)
				require.Equal(t, exitUsage, r.code, r.stderr)
				require.Equal(t, tc.want, r.stderr)
			})
		}
	}
}
