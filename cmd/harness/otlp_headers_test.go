package main

import (
	"strings"
	"testing"
)

// TestOTLPRefusesHeadersHTTPRefuses: an OTEL_EXPORTER_OTLP_HEADERS entry
// no HTTP request can carry (a name with a space, a value that decodes
// to a newline) stops the run at start, as another malformed OTEL_*
// value does (exit 2, one line), and the line shows no header value;
// before, the run went on and all its telemetry was dropped.
func TestOTLPRefusesHeadersHTTPRefuses(t *testing.T) {
	isolate(t)
	const value = "hdrsekrit456"
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")
	malformed := runFake(t, "long-silent-tool", "--otlp", "http://127.0.0.1:1")
	if malformed.code != exitUsage {
		t.Fatalf("a malformed OTEL_EXPORTER_OTLP_TIMEOUT: exit %d, want %d", malformed.code, exitUsage)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "")
	for _, h := range []string{"Bad Key=" + value, "X-Key=" + value + "%0AX-Injected: 1"} {
		t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", h)
		res := runFake(t, "long-silent-tool", "--otlp", "http://127.0.0.1:1")
		lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
		if res.code != malformed.code || res.stdout != "" || len(lines) != 1 ||
			!strings.Contains(res.stderr, "OTEL_EXPORTER_OTLP_HEADERS") || strings.Contains(res.stderr, value) {
			t.Errorf("headers %q: exit %d (want %d), %d bytes of stdout, stderr %q: want one line naming the variable, not the value",
				h, res.code, malformed.code, len(res.stdout), res.stderr)
		}
	}
}
