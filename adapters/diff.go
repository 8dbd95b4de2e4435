package adapters

import (
	"strconv"
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
	switch {
	case before == "": // a new file: one hunk, no diffing needed
		return wholeFile(from, to, '+', after)
	case after == "":
		return wholeFile(from, to, '-', before)
	}
	return udiff.Unified(from, to, before, after)
}

// wholeFile writes the diff of a file created or removed whole, exactly as
// go-udiff does (held by FuzzWholeFileMatchesUdiff).
func wholeFile(from, to string, sign byte, text string) string {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	count := strconv.Itoa(len(lines))
	if len(lines) != 1 {
		count = "1," + count
	}
	var b strings.Builder
	b.Grow(len(text) + len(lines) + len(from) + len(to) + 64)
	b.WriteString("--- " + from + "\n+++ " + to + "\n")
	if sign == '+' {
		b.WriteString("@@ -0,0 +" + count + " @@\n")
	} else {
		b.WriteString("@@ -" + count + " +0,0 @@\n")
	}
	for _, l := range lines {
		b.WriteByte(sign)
		b.WriteString(l)
	}
	if !strings.HasSuffix(text, "\n") {
		b.WriteString("\n\\ No newline at end of file\n")
	}
	return b.String()
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
