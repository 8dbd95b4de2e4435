package otlp

import (
	"strings"
	"testing"
)

// TestFromEnvRefusesHeadersHTTPRefuses: an OTEL_EXPORTER_OTLP_HEADERS
// entry net/http would refuse at every request (a name that is not a
// token, a value that decodes to a control character) is an error at
// start, of one line, naming neither the value nor a name that is not
// one; the headers it takes still go through.
func TestFromEnvRefusesHeadersHTTPRefuses(t *testing.T) {
	const value = "v4lue-s3cret"
	for _, h := range []string{
		"Bad Key=" + value,
		"Authorization: Bearer " + value + "=x", // a header written as HTTP, with a '=' in the token
		"Bad\tKey=" + value,
		"Bäd=" + value,
		"X-Ok=a,Bad(Key)=" + value,
		"X-Key=" + value + "%0AInjected: 1",
		"X-Key=" + value + "%0D",
		"X-Key=" + value + "%00",
		"X-Key=" + value + "%7F",
		"X-Key=" + value + "\x01",
	} {
		_, _, err := FromEnv("http://127.0.0.1:4318", func(k string) string {
			return map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": h}[k]
		})
		if err == nil {
			t.Errorf("%q: no error", h)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, value) || strings.ContainsAny(msg, "\r\n") || !strings.HasPrefix(msg, "OTEL_EXPORTER_OTLP_HEADERS: ") {
			t.Errorf("%q: error %q: want one line naming the variable, without the value", h, msg)
		}
	}
	cfg, _, err := FromEnv("http://127.0.0.1:4318", func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "X-Api-Key=a%09b%20c, x_team.1=ünï ,Dd-Api-Key=~!#"}[k]
	})
	if err != nil || cfg.Headers["X-Api-Key"] != "a\tb c" || cfg.Headers["x_team.1"] != "ünï" || cfg.Headers["Dd-Api-Key"] != "~!#" {
		t.Errorf("valid headers: %q, %v", cfg.Headers, err)
	}
	// Resource attributes are no headers: their keys may be anything.
	if res, err := ResourceFromEnv(func(k string) string {
		return map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "my key=a%0Ab"}[k]
	}); err != nil || len(res) < 2 {
		t.Errorf("resource attributes: %v, %v", res, err)
	}
}
