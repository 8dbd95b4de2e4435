package otlp

import (
	"strings"
	"testing"
)

// TestEndpointErrorShowsNoPasswordBeforeAQuery: otlp's own masking cut
// the query at the first "?" before it looked for the user info, so a
// password with a "?" in it was shown up to there, the user with it
// ("http://otlpuser:s3cr?***"). Its messages now mask as config show does
// (urlmask): all after the scheme, when a "?" comes before the last "@".
func TestEndpointErrorShowsNoPasswordBeforeAQuery(t *testing.T) {
	for _, endpoint := range []string{
		"http://otlpuser:s3cr?et@127.0.0.1:4318",
		"http://otlpuser:s3cr?et@127.0.0.1:4318?api_key=k3y",
	} {
		_, _, err := FromEnv(endpoint, func(string) string { return "" })
		if err == nil {
			t.Fatalf("%s: no error", endpoint)
		}
		for _, secret := range []string{"otlpuser", "s3cr", "k3y"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%s: error %q shows %q", endpoint, err, secret)
			}
		}
	}
}
