package otlp

import (
	"net/http"
	"testing"
	"time"
)

// TestRetryAfterTooLongForADuration: a Retry-After of more seconds than
// a time.Duration holds is past any deadline, and ends the tries; it
// wrapped round to a negative wait, taken as the backoff: asked again.
func TestRetryAfterTooLongForADuration(t *testing.T) {
	for _, h := range []string{"9223372037", "99999999999", "18446744073709551615"} {
		r := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {h}}}
		wait, ok := retryAfter(r, time.Second, time.Now())
		if !ok || wait < 24*time.Hour {
			t.Errorf("Retry-After %s: wait %v, %v; want past any deadline", h, wait, ok)
		}
	}
}
