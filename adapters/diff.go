package adapters

import (
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// UnifiedDiff returns a unified diff of a file at path going from before to
// after. An empty before is a new file (diffed against /dev/null), an empty
// after a removed one. It returns "" when nothing changed.
func UnifiedDiff(path, before, after string) string {
	if before == after {
		return ""
	}
	from, to := "a/"+strings.TrimPrefix(path, "/"), "b/"+strings.TrimPrefix(path, "/")
	if before == "" {
		from = "/dev/null"
	}
	if after == "" {
		to = "/dev/null"
	}
	return udiff.Unified(from, to, before, after)
}

// JoinDiffs joins per-file diffs, skipping empty ones.
func JoinDiffs(diffs ...string) string {
	var b strings.Builder
	for _, d := range diffs {
		if d == "" {
			continue
		}
		b.WriteString(d)
		if !strings.HasSuffix(d, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
