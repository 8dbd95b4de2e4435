package urlmask

import (
	"strings"
	"testing"
)

// TestMask: config show (which kept query keys) and otlp's messages
// (which hid the whole query, but showed a user and password cut short
// by a "?" in the password) masked endpoints two ways; this is the one
// rule, and no secret of any case below reaches its output.
func TestMask(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"http://127.0.0.1:4318", "http://127.0.0.1:4318"},
		{"http://u:p@h:4318/v1", "http://***@h:4318/v1"},
		{"http://u:p/w@h:4318/v1", "http://***@h:4318/v1"}, // a "/" in the password
		{"http://u:p?w@h:4318", "http://***"},              // a "?" in the password: otlp's showed "http://u:p?***"
		{"http://h?a=1&b=&c", "http://h?a=***&b=***&***"},
		{"http://h/?key=v#frag", "http://h/?key=***#***"},
		{"u:p@h:4318", "***@h:4318"},
		{"http://h?k=a@b&t=s3", "http://***"}, // or an "@" in the query
		{"https://m.example/models.toml?token=SECRET", "https://m.example/models.toml?token=***"},
		{"http://u:pw@h/models.toml?token=SECRET", "http://***@h/models.toml?token=***"},
		{"http://h/v1/traces?api_key=SECRET&x", "http://h/v1/traces?api_key=***&***"},
	} {
		got := Mask(c.in)
		if got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.in, got, c.want)
		}
		for _, secret := range []string{"u:p", "SECRET", "s3", "pw"} {
			if strings.Contains(c.in, secret) && strings.Contains(got, secret) {
				t.Errorf("Mask(%q) = %q shows %q", c.in, got, secret)
			}
		}
	}
}
