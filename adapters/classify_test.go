package adapters

import (
	"strings"
	"testing"

	"github.com/agentharness/harness/event"
)

// classifyByRules is ClassifyError as the rules read: each rule in turn,
// each of its errno names, codes and words searched for in the whole
// text. ClassifyError finds the words in one pass and must agree.
func classifyByRules(text string) string {
	if strings.TrimSpace(text) == "" {
		return ""
	}
	lower := strings.ToLower(text)
	for _, r := range classRules {
		if r.class == event.ClassNetwork {
			for _, e := range errnoNames {
				for i := 0; ; {
					j := strings.Index(lower[i:], e)
					if j < 0 {
						break
					}
					if wordAt(lower, i+j, len(e)) {
						return r.class
					}
					i += j + 1
				}
			}
		}
		for _, c := range r.codes {
			if containsNumber(lower, c) {
				return r.class
			}
		}
		for _, w := range r.words {
			if strings.Contains(lower, w) {
				return r.class
			}
		}
	}
	return ""
}

func FuzzClassifyError(f *testing.F) {
	for _, s := range []string{"", "API Error: 529 Overloaded", "connect ECONNREFUSED 127.0.0.1:9", "FileNotFoundError enotfound",
		"rate limit; 401", "Unknown model: network socket timed out", "İnvalid API KEY", "x/login 413", "dns_enotfound econnreset",
		"prompt is too long: context window of 200000 tokens", "Loop detection: the model repeated the same tool call; continuing."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := ClassifyError(text), classifyByRules(text); got != want {
			t.Fatalf("ClassifyError(%q) = %q, the rules one by one %q", text, got, want)
		}
	})
}
