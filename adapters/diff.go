package adapters

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/aymanbagabas/go-udiff/lcs"

	"github.com/agentharness/harness/event"
)

// File is a file's content at one moment. The zero File is a file that
// does not exist, which is not the same as an empty one: a diff from an
// absent file is a creation (--- /dev/null), from an empty one an edit.
type File struct {
	Text   string
	Exists bool
}

// Present returns the File of an existing file holding text.
func Present(text string) File { return File{Text: text, Exists: true} }

// Diff returns the unified diff of the file at path going from before to
// after, in the form git apply and patch take: headers --- a/PATH and
// +++ b/PATH, /dev/null for a file created or removed. path is printed as
// given (see DisplayPath). It returns "" when nothing changed.
func Diff(path string, before, after File) string {
	name, ok := HeaderName(path)
	if !ok {
		return ""
	}
	return diffOf(name, before, after)
}

// diffOf is Diff of the file that the headers call name (HeaderName).
func diffOf(name string, before, after File) string {
	switch {
	case before == after, !before.Exists && !after.Exists:
		return ""
	case !before.Exists:
		if after.Text == "" {
			return "" // creating an empty file has no hunk to show
		}
		return wholeFile(name, '+', after.Text)
	case !after.Exists:
		if before.Text == "" {
			return ""
		}
		return wholeFile(name, '-', before.Text)
	}
	return unified(name, before.Text, after.Text)
}

// unified is udiff.Unified, byte for byte (held by FuzzUnifiedMatchesUdiff
// and the goldens). The line LCS is udiff's own (lcs.DiffLines); what
// udiff does around it — splitting both texts into lines three times,
// joining each replacement into a string, splitting it again, a struct per
// hunk line, one Fprintf per line — is done here on the lines split once.
// That was most of a diff's cost on the small files agents edit: with it,
// adapters.Diff was 15 % of `harness parse --agent gemini` instructions
// (callgrind), a diff after every write_file and replace. Edits that
// udiff would merge (two that touch) take udiff's path, hunks and all
// (slowUnified).
func unified(name, before, after string) string {
	a, b := splitLines(before), splitLines(after)
	diffs := lineDiffs(a, b)
	if touching(diffs) {
		return slowUnified(name, before, after)
	}
	// Hunks as udiff's toUnified groups them: context lines around each
	// edit, edits closer than twice the context joined into one hunk.
	const ctx = udiff.DefaultContextLines
	// ops is sized once, for all the lines the hunks can hold (each
	// edit's, and at most 2*ctx of context for each), on the stack when
	// that is little: growing it from nil was 2.7 allocations a diff,
	// 1 % of `harness parse --agent gemini` instructions.
	n := 0
	for _, d := range diffs {
		n += d.End - d.Start + d.ReplEnd - d.ReplStart + 2*ctx
	}
	var small [16]lineOp // on the stack: the hunks of most edits fit
	ops := small[:0]
	if n > len(small) {
		ops = make([]lineOp, 0, n)
	}
	var hunks []hunkSpan
	cur := -1 // the hunk being built, an index in hunks
	last, toLine := 0, 0
	for _, d := range diffs {
		switch {
		case cur >= 0 && d.Start == last:
		case cur >= 0 && d.Start <= last+2*ctx:
			ops, _ = equalLines(ops, a, last, d.Start)
		default:
			if cur >= 0 {
				ops, _ = equalLines(ops, a, last, last+ctx)
				hunks[cur].end = len(ops)
			}
			toLine += d.Start - last
			hunks = append(hunks, hunkSpan{fromLine: d.Start + 1, toLine: toLine + 1, start: len(ops)})
			cur = len(hunks) - 1
			var n int
			ops, n = equalLines(ops, a, d.Start-ctx, d.Start)
			hunks[cur].fromLine -= n
			hunks[cur].toLine -= n
		}
		last = d.Start
		for _, l := range a[d.Start:d.End] {
			ops = append(ops, lineOp{'-', l})
			last++
		}
		for _, l := range b[d.ReplStart:d.ReplEnd] {
			ops = append(ops, lineOp{'+', l})
			toLine++
		}
	}
	if cur < 0 {
		return slowUnified(name, before, after) // no hunk: udiff's own answer
	}
	ops, _ = equalLines(ops, a, last, last+ctx)
	hunks[cur].end = len(ops)

	return renderHunks(name, ops, hunks)
}

// lineOp is one line of a hunk: its sign (' ', '-', '+') and text.
type lineOp struct {
	sign byte
	text string
}

// hunkSpan is a hunk: where it starts on each side (1-based) and its
// lines, ops[start:end].
type hunkSpan struct{ fromLine, toLine, start, end int }

// equalLines appends the context lines a[from:to] that exist, as udiff's
// addEqualLines does, and returns how many it appended.
func equalLines(ops []lineOp, a []string, from, to int) ([]lineOp, int) {
	n := 0
	for i := max(from, 0); i < to && i < len(a); i++ {
		ops = append(ops, lineOp{' ', a[i]})
		n++
	}
	return ops, n
}

// splitLines is udiff's: the lines of text with their newlines (the last
// one may have none).
func splitLines(text string) []string {
	lines := make([]string, 0, strings.Count(text, "\n")+1)
	for start := 0; start < len(text); {
		end := len(text)
		if i := strings.IndexByte(text[start:], '\n'); i >= 0 {
			end = start + i + 1
		}
		lines = append(lines, text[start:end])
		start = end
	}
	return lines
}

// lineDiffs is lcs.DiffLines(a, b), without running it when its answer
// is known: one edit of a and b between their common prefix and suffix,
// when no line of either middle occurs anywhere in the other text. Those
// lines then match nothing, so every common subsequence pairs lines of the
// prefix and suffix only, which are the same sequence on both sides: the
// longest pairs them in place, and no other pairing is as long. udiff's
// Myers search finds a longest one while the edit is within its depth
// limit (maxDiffs/2 = 50 rounds, each a step forward and back), so it
// finds this one. The agents' edits are mostly that (a line replaced,
// added or removed in a small file), and udiff's search allocates about
// 2.4 KB for any diff: it was 8 % of `harness parse --agent gemini`'s
// CPU. The cost of the check is bounded (checkBudget line comparisons);
// FuzzUnifiedMatchesUdiff holds the output equal.
func lineDiffs(a, b []string) []lcs.Diff {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	x, y := a[p:len(a)-s], b[p:len(b)-s]
	const maxEdit, checkBudget = 40, 4096
	if n := len(x) + len(y); n == 0 || n > maxEdit || n*(len(a)+len(b)) > checkBudget ||
		anyIn(x, b) || anyIn(y, a) {
		return lcs.DiffLines(a, b)
	}
	return []lcs.Diff{{Start: p, End: len(a) - s, ReplStart: p, ReplEnd: len(b) - s}}
}

// anyIn reports whether a line of lines occurs in text.
func anyIn(lines, text []string) bool {
	for _, l := range lines {
		if slices.Contains(text, l) {
			return true
		}
	}
	return false
}

// touching reports whether two edits of diffs touch, which udiff's
// lineEdits would merge into one. Its other widening, of an edit to whole
// lines, changes nothing here: an edit of the line LCS starts and ends at
// line starts, and one that ends without a newline (a last line that has
// none) runs to the end of both texts, as what follows it is common. The
// edits udiff took its slow path for (a last line without its newline
// among them) were a third of Diff's instructions on the gemini benchmark
// stream; FuzzUnifiedMatchesUdiff holds the output equal.
func touching(diffs []lcs.Diff) bool {
	for i := 1; i < len(diffs); i++ {
		if diffs[i].Start <= diffs[i-1].End {
			return true
		}
	}
	return false
}

// slowUnified renders udiff's own hunks, for the edits unified leaves to it.
func slowUnified(name, before, after string) string {
	from, to := "a/"+name, "b/"+name
	u, err := udiff.ToUnifiedDiff(from, to, before, udiff.Lines(before, after), udiff.DefaultContextLines)
	if err != nil || len(u.Hunks) == 0 {
		return udiff.Unified(from, to, before, after) // udiff's own answer, errors included
	}
	var ops []lineOp
	hunks := make([]hunkSpan, 0, len(u.Hunks))
	for _, h := range u.Hunks {
		start := len(ops)
		for _, l := range h.Lines {
			sign := byte(' ')
			switch l.Kind {
			case udiff.Delete:
				sign = '-'
			case udiff.Insert:
				sign = '+'
			}
			ops = append(ops, lineOp{sign, l.Content})
		}
		hunks = append(hunks, hunkSpan{fromLine: h.FromLine, toLine: h.ToLine, start: start, end: len(ops)})
	}
	return renderHunks(name, ops, hunks)
}

// renderHunks writes hunks, whose lines are ops, as unified diff text,
// with the headers of an edit of name.
func renderHunks(name string, ops []lineOp, hunks []hunkSpan) string {
	n := 2*len(name) + len("--- a/\n+++ b/\n") + 32*len(hunks)
	for _, o := range ops {
		n += 1 + len(o.text)
	}
	var sb strings.Builder
	sb.Grow(n)
	writeHeader(&sb, name, true, true)
	for _, h := range hunks {
		fromCount, toCount := 0, 0
		for _, o := range ops[h.start:h.end] {
			if o.sign != '+' {
				fromCount++
			}
			if o.sign != '-' {
				toCount++
			}
		}
		writeHunkHeader(&sb, h.fromLine, fromCount, h.toLine, toCount)
		for _, o := range ops[h.start:h.end] {
			sb.WriteByte(o.sign)
			sb.WriteString(o.text)
			if !strings.HasSuffix(o.text, "\n") {
				sb.WriteString(noNewline)
			}
		}
	}
	return sb.String()
}

// noNewline ends a last line that has no newline.
const noNewline = "\n\\ No newline at end of file\n"

// writeHeader writes the headers of a diff of name: --- a/NAME and
// +++ b/NAME, /dev/null on the side where the file does not exist. Its
// pieces go straight into b: joining them first made three strings a
// diff, a quarter of its instructions.
func writeHeader(b *strings.Builder, name string, before, after bool) {
	if before {
		b.WriteString("--- a/")
		b.WriteString(name)
	} else {
		b.WriteString("--- /dev/null")
	}
	if after {
		b.WriteString("\n+++ b/")
		b.WriteString(name)
		b.WriteByte('\n')
	} else {
		b.WriteString("\n+++ /dev/null\n")
	}
}

// writeHunkHeader writes the line that starts a hunk: where it starts
// on each side and how many lines it has there.
func writeHunkHeader(b *strings.Builder, fromLine, fromCount, toLine, toCount int) {
	b.WriteString("@@ -")
	hunkRange(b, fromLine, fromCount)
	b.WriteString(" +")
	hunkRange(b, toLine, toCount)
	b.WriteString(" @@\n")
}

// hunkRange writes one side of a hunk header as udiff does: "L,N" for
// more than one line, "0,0" for nothing added at the top (as GNU diff -u
// does), else "L".
func hunkRange(b *strings.Builder, line, count int) {
	switch {
	case count > 1:
		writeInt(b, line)
		b.WriteByte(',')
		writeInt(b, count)
	case line == 1 && count == 0:
		b.WriteString("0,0")
	default:
		writeInt(b, line)
	}
}

// writeInt writes n in decimal, with no string made for it.
func writeInt(b *strings.Builder, n int) {
	var buf [20]byte
	b.Write(strconv.AppendInt(buf[:0], int64(n), 10))
}

// DiffOrSkip is Diff, and the reason there is none where the file
// changed but no header can name it (HeaderName): diff_skipped
// "unknown", not an empty diff, which would say nothing changed.
func DiffOrSkip(path string, before, after File) (diff, skipped string) {
	if name, ok := HeaderName(path); ok {
		return diffOf(name, before, after), ""
	}
	if Diff("f", before, after) != "" {
		return "", event.DiffSkippedUnknown
	}
	return "", "" // nothing a diff would show (an empty file created)
}

// HeaderName is how the headers of the diff of the file at path name it
// (after their a/ or b/): path without its leading slash. It reports false
// when no header can name the file: the root ("/" leaves nothing), a
// newline, which would end the header line, a tab, where git apply and
// event.ParsePatch end the name (a timestamp follows it in diff -u's
// headers), or a CR, which git apply drops. Such a header would name
// another file.
func HeaderName(path string) (string, bool) {
	name := strings.TrimPrefix(filepath.ToSlash(path), "/")
	return name, name != "" && !strings.ContainsAny(name, "\n\r\t")
}

// DisplayPath is how a diff header names the file at path: relative to cwd
// where the path is inside it, else the path itself. An empty cwd leaves
// path as it is.
//
// Where cwd and path are plain (absolute paths of plain names, or path
// relative), the name is worked out without filepath's two Cleans and Rel:
// they cost 3,000 instructions a diff (7 M on the 20 MB Cursor corpus).
// FuzzDisplayPath holds the two ways to the same names.
func DisplayPath(cwd, path string) string {
	if isPlainAbs(cwd) {
		switch {
		case plainNames(path):
			return path // relative, and so inside cwd
		case isPlainAbs(path) && path != cwd:
			if rest, ok := strings.CutPrefix(path, cwd); ok && rest[0] == '/' {
				return rest[1:]
			}
			return path // outside cwd
		}
	}
	return cleanDisplayPath(cwd, path)
}

// isPlainAbs reports whether path is a slash and plain names, not the
// root alone.
func isPlainAbs(path string) bool {
	return len(path) > 1 && path[0] == '/' && plainNames(path[1:])
}

// plainNames reports whether path is a relative path of names, none "."
// or "..", one slash apart: one that filepath.Clean leaves as it is and
// that stays below its directory.
func plainNames(path string) bool {
	for name := range strings.SplitSeq(path, "/") {
		if name == "" || name == "." || name == ".." {
			return false
		}
	}
	return true
}

// cleanDisplayPath is DisplayPath for any cwd and path, with filepath.
func cleanDisplayPath(cwd, path string) string {
	if cwd == "" || path == "" {
		return path
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(cwd, abs)
	}
	rel, err := filepath.Rel(cwd, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return path
	}
	return rel
}

// wholeFile writes the diff of name created (sign '+') or removed ('-')
// whole, holding text, exactly as go-udiff does (held by
// FuzzWholeFileMatchesUdiff).
func wholeFile(name string, sign byte, text string) string {
	n := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		n++ // the last line, without its newline
	}
	var b strings.Builder
	// The text, a sign a line, the headers (21 bytes and the name), the
	// hunk's (22 bytes up to 10 million lines) and noNewline.
	b.Grow(len(text) + n + 21 + len(name) + 22 + len(noNewline))
	writeHeader(&b, name, sign == '-', sign == '+')
	if sign == '+' {
		writeHunkHeader(&b, 1, 0, 1, n)
	} else {
		writeHunkHeader(&b, 1, n, 1, 0)
	}
	for l := range strings.Lines(text) {
		b.WriteByte(sign)
		b.WriteString(l)
	}
	if !strings.HasSuffix(text, "\n") {
		b.WriteString(noNewline)
	}
	return b.String()
}

// JoinDiffs joins per-file diffs, skipping empty ones.
func JoinDiffs(diffs ...string) string {
	if len(diffs) == 1 && strings.HasSuffix(diffs[0], "\n") {
		return diffs[0] // the common case: no copy
	}
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
