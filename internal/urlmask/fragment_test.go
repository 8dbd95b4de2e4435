package urlmask

import (
	"strings"
	"testing"
)

// TestMaskFragment: a fragment was shown in clear when there was no
// query (http://h/#secret), and swallowed into the last query value when
// there was one. A fragment may carry a token as a query does (OAuth's
// #access_token=…): its "#" stays and what follows is "***", with or
// without a query; a "#" before the last "@" may be a password's, so all
// after the scheme is masked, as for a "?".
func TestMaskFragment(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://h/#SECRET", "http://h/#***"},
		{"http://h#SECRET", "http://h#***"},
		{"http://h/v1#access_token=SECRET&x=1", "http://h/v1#***"},
		{"http://h/?key=SECRET#SECRET", "http://h/?key=***#***"},
		{"http://h/?SECRET#SECRET", "http://h/?***#***"},
		{"http://h/?#SECRET", "http://h/?#***"},
		{"http://h/#", "http://h/#"},
		{"http://u:SECRET@h/#SECRET", "http://***@h/#***"},
		{"http://h/#SE@CRET", "http://***"},   // an "@" in the fragment
		{"http://u:p#SECRET@h", "http://***"}, // or a "#" in the password
	} {
		got := Mask(c.in)
		if got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.in, got, c.want)
		}
		for _, secret := range []string{"SECRET", "SE", "CRET"} {
			if strings.Contains(got, secret) {
				t.Errorf("Mask(%q) = %q shows %q", c.in, got, secret)
			}
		}
	}
}
