package harness

import (
	_ "embed"
	"strings"
)

// agentsLock is agents.lock as built: the CLI versions the adapters'
// captures and the e2e suite were measured on.
//
//go:embed agents.lock
var agentsLock string

// Pin returns the version agents.lock pins the npm package pkg at, or ""
// when it pins none: 'harness check' compares it with the version
// installed, and a difference is what 'harness conform' is for.
func Pin(pkg string) string {
	if pkg == "" {
		return ""
	}
	for _, line := range strings.Split(agentsLock, "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		// The last @ splits name@version; a scoped name starts with one.
		if i := strings.LastIndex(line, "@"); i > 0 && line[:i] == pkg {
			return line[i+1:]
		}
	}
	return ""
}
