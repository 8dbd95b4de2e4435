package event

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// FilePatch is one file's part of a unified diff: the paths of its
// --- and +++ headers (with the a/ and b/ prefixes removed; "" for
// /dev/null, a file that did not exist or no longer does) and its hunks.
type FilePatch struct {
	From, To string
	Hunks    []Hunk
}

// Hunk is one @@ -OldStart,OldCount +NewStart,NewCount @@ block. Lines
// keep their sign (' ', '-', '+') first and their newline last; a line
// followed by "\ No newline at end of file" has none.
type Hunk struct {
	OldStart, OldCount int
	NewStart, NewCount int
	Lines              []string
}

// ParsePatch parses a unified diff of one or more files, in the form diff
// -u, git diff and adapters.Diff write. Lines outside the file patches
// (git's extended headers such as diff --git and index, jsdiff's Index:
// and ===) are ignored, as git apply ignores them. Every hunk must hold
// exactly the lines its header counts.
func ParsePatch(diff string) ([]FilePatch, error) {
	return new(patchScratch).parse(diff)
}

// patchScratch is the memory a parse of a patch works in: the patch's
// lines, its files and their hunks. A DiffReplay parses every diff in the
// same one, which is free again once the diff is applied.
type patchScratch struct {
	lines   []string
	patches []FilePatch
	hunks   []Hunk
}

// parse is ParsePatch in s's memory: what it returns is valid until the
// next parse.
func (s *patchScratch) parse(diff string) ([]FilePatch, error) {
	if diff == "" {
		return nil, nil
	}
	lines := s.lines[:0]
	for rest := diff; rest != ""; {
		lines = append(lines, nextLine(&rest))
	}
	s.lines, s.patches, s.hunks = lines, s.patches[:0], s.hunks[:0]
	for i := 0; i < len(lines); {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "--- "):
			fp, next, err := s.parseFile(i)
			if err != nil {
				return nil, err
			}
			s.patches = append(s.patches, fp)
			i = next
		default:
			i++ // text around the patches, as git apply and patch allow
		}
	}
	if len(s.patches) == 0 {
		return nil, errors.New("diff has no file header")
	}
	return s.patches, nil
}

func (s *patchScratch) parseFile(i int) (FilePatch, int, error) {
	lines := s.lines
	var fp FilePatch
	if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "+++ ") {
		return fp, 0, fmt.Errorf("diff line %d: --- without +++", i+1)
	}
	fp.From = headerPath(lines[i][4:], "a/")
	fp.To = headerPath(lines[i+1][4:], "b/")
	if fp.From == "" && fp.To == "" {
		return fp, 0, fmt.Errorf("diff line %d: both sides are /dev/null", i+1)
	}
	i += 2
	first := len(s.hunks)
	for i < len(lines) && strings.HasPrefix(lines[i], "@@ ") {
		h, next, err := parseHunk(lines, i)
		if err != nil {
			return fp, 0, err
		}
		s.hunks = append(s.hunks, h)
		i = next
	}
	if len(s.hunks) == first {
		return fp, 0, fmt.Errorf("diff line %d: file %q has no hunk", i, fp.To+fp.From)
	}
	fp.Hunks = s.hunks[first:len(s.hunks):len(s.hunks)]
	return fp, i, nil
}

// headerPath is the path of a --- or +++ header: a timestamp after a tab
// (diff -u) is dropped, and so is git's a/ or b/ prefix.
func headerPath(h, prefix string) string {
	h = strings.TrimSuffix(h, "\n")
	if tab := strings.IndexByte(h, '\t'); tab >= 0 {
		h = h[:tab]
	}
	if h == "/dev/null" {
		return ""
	}
	return strings.TrimPrefix(h, prefix)
}

// parseHunk reads the hunk at lines[i]. Its Lines share lines' array (no
// allocation per hunk): a no-newline mark is dropped by moving the hunk's
// later lines down over it, which only writes slots already read.
func parseHunk(lines []string, i int) (Hunk, int, error) {
	var h Hunk
	if err := parseRange(lines[i], &h); err != nil {
		return h, 0, fmt.Errorf("diff line %d: %w", i+1, err)
	}
	old, new := 0, 0
	i++
	first, n := i, 0 // h.Lines is lines[first : first+n]
	for i < len(lines) && (old < h.OldCount || new < h.NewCount) {
		l := lines[i]
		switch l[0] {
		case ' ':
			old++
			new++
		case '-':
			old++
		case '+':
			new++
		case '\\':
			return h, 0, fmt.Errorf("diff line %d: a no-newline mark before the hunk's last line", i+1)
		default:
			return h, 0, fmt.Errorf("diff line %d: hunk holds fewer lines than its header counts", i+1)
		}
		if !strings.HasSuffix(l, "\n") {
			return h, 0, fmt.Errorf("diff line %d: the diff ends inside a line", i+1)
		}
		i++
		// The mark may follow any of the last lines of either side.
		if i < len(lines) && strings.HasPrefix(lines[i], `\`) {
			l = strings.TrimSuffix(l, "\n")
			i++
		}
		lines[first+n] = l
		n++
	}
	if n > 0 {
		h.Lines = lines[first : first+n : first+n]
	}
	if old != h.OldCount || new != h.NewCount {
		return h, 0, fmt.Errorf("hunk at -%d,%d: holds %d old and %d new lines", h.OldStart, h.OldCount, old, new)
	}
	if i < len(lines) && len(lines[i]) > 0 && strings.ContainsRune(" -+\\", rune(lines[i][0])) && !strings.HasPrefix(lines[i], "--- ") {
		return h, 0, fmt.Errorf("diff line %d: hunk holds more lines than its header counts", i+1)
	}
	return h, i, nil
}

// ParseHunkHeader reads a hunk's header line, "@@ -a,b +c,d @@" and
// whatever follows it (a count of one may be left out), as ParsePatch
// does. The Hunk returned has no lines.
func ParseHunkHeader(line string) (Hunk, error) {
	var h Hunk
	err := parseRange(line, &h)
	return h, err
}

// OldAt is the index (0-based) of the first line the old range covers;
// an empty range -N,0 sits after line N.
func (h Hunk) OldAt() int { return at(h.OldStart, h.OldCount) }

// NewAt is OldAt of the new range.
func (h Hunk) NewAt() int { return at(h.NewStart, h.NewCount) }

// parseRange reads "@@ -a,b +c,d @@" (a count of one may be left out).
// A header starts with "@@ ", as ParsePatch finds hunks: one that did not
// ("0 -2,2 +2,3 @@") was read here, so a diff that ParseHunkHeader passed
// had no hunk for ParsePatch.
func parseRange(l string, h *Hunk) error {
	if parseRangeAsWritten(l, h) {
		return nil
	}
	f := strings.Fields(l)
	if !strings.HasPrefix(l, "@@ ") || len(f) < 4 || f[3] != "@@" || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return fmt.Errorf("bad hunk header %q", strings.TrimSuffix(l, "\n"))
	}
	var err1, err2 error
	h.OldStart, h.OldCount, err1 = parseSpan(f[1][1:])
	h.NewStart, h.NewCount, err2 = parseSpan(f[2][1:])
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("bad hunk header %q: %w", strings.TrimSuffix(l, "\n"), err)
	}
	return nil
}

// parseRangeAsWritten reads the header as diff tools write it, single
// spaces between its four fields, without splitting it into fields (an
// allocation a hunk); it reports false for anything else, which parseRange
// then reads field by field.
func parseRangeAsWritten(l string, h *Hunk) bool {
	rest, ok := strings.CutPrefix(l, "@@ -")
	if !ok {
		return false
	}
	oldSpan, rest, ok1 := strings.Cut(rest, " +")
	newSpan, rest, ok2 := strings.Cut(rest, " @@")
	if !ok1 || !ok2 || !spanChars(oldSpan) || !spanChars(newSpan) {
		return false
	}
	if rest != "" && !strings.ContainsRune(" \t\n\v\f\r", rune(rest[0])) {
		return false
	}
	var err1, err2 error
	h.OldStart, h.OldCount, err1 = parseSpan(oldSpan)
	h.NewStart, h.NewCount, err2 = parseSpan(newSpan)
	return err1 == nil && err2 == nil
}

// spanChars reports whether s is made of digits and commas only (no
// space that would make it two fields).
func spanChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && c != ',' {
			return false
		}
	}
	return true
}

func parseSpan(s string) (start, count int, err error) {
	a, b, ok := strings.Cut(s, ",")
	count = 1
	if ok {
		if count, err = strconv.Atoi(b); err != nil || count < 0 {
			return 0, 0, fmt.Errorf("count %q", b)
		}
	}
	if start, err = strconv.Atoi(a); err != nil || start < 0 || (start == 0 && count > 0) {
		return 0, 0, fmt.Errorf("start %q", a)
	}
	return start, count, nil
}

// at is the index (0-based) of the first line a span covers; an empty
// span -N,0 sits after line N.
func at(start, count int) int {
	if count == 0 {
		return start
	}
	return start - 1
}

// ApplyPatch applies one file's patch to the file's content, exactly: each
// hunk at the line its header names, its context and removed lines equal
// to the file's, no fuzz, no offset. exists says whether the file existed;
// a patch from /dev/null needs a file that did not, a patch to /dev/null
// must remove all of it. It returns the content after and whether the file
// still exists.
func ApplyPatch(p FilePatch, content string, exists bool) (string, bool, error) {
	if p.From == "" && exists {
		return "", false, fmt.Errorf("%s: created by the diff but it already exists", p.To)
	}
	if p.From != "" && !exists {
		return "", false, fmt.Errorf("%s: the diff changes a file that does not exist", p.From)
	}
	// content is walked line by line as the hunks reach it (they are in
	// order), and the result written once: no slice of either's lines.
	var out strings.Builder
	out.Grow(len(content) + added(p))
	rest, line := content, 0 // the old lines not yet reached; the index of the first
	open := false            // the last line written has no newline
	write := func(l string) error {
		if open {
			return fmt.Errorf("%s: a line without newline is not the last one", name(p))
		}
		out.WriteString(l)
		open = !strings.HasSuffix(l, "\n")
		return nil
	}
	delta := 0
	for _, h := range p.Hunks {
		i := at(h.OldStart, h.OldCount)
		if i < line {
			return "", false, fmt.Errorf("%s: hunk -%d,%d is out of order or past the end (%d lines)", name(p), h.OldStart, h.OldCount, countLines(content))
		}
		if want := at(h.NewStart, h.NewCount); i+delta != want {
			return "", false, fmt.Errorf("%s: hunk -%d,%d +%d,%d: new start should be line %d", name(p), h.OldStart, h.OldCount, h.NewStart, h.NewCount, i+delta+1)
		}
		for ; line < i; line++ {
			if rest == "" {
				return "", false, fmt.Errorf("%s: hunk -%d,%d is out of order or past the end (%d lines)", name(p), h.OldStart, h.OldCount, countLines(content))
			}
			l := nextLine(&rest)
			if err := write(l); err != nil {
				return "", false, err
			}
		}
		for _, l := range h.Lines {
			switch l[0] {
			case ' ', '-':
				if rest == "" {
					return "", false, fmt.Errorf("%s: hunk -%d,%d: line %d is %s in the file, %q in the diff", name(p), h.OldStart, h.OldCount, line+1, "(end of file)", l[1:])
				}
				if have := nextLine(&rest); have != l[1:] {
					return "", false, fmt.Errorf("%s: hunk -%d,%d: line %d is %q in the file, %q in the diff", name(p), h.OldStart, h.OldCount, line+1, have, l[1:])
				}
				line++
				if l[0] == ' ' {
					if err := write(l[1:]); err != nil {
						return "", false, err
					}
				}
			case '+':
				if err := write(l[1:]); err != nil {
					return "", false, err
				}
			}
		}
		delta += h.NewCount - h.OldCount
	}
	if rest != "" {
		if err := write(rest); err != nil {
			return "", false, err
		}
	}
	after := out.String()
	if p.To == "" {
		if after != "" {
			return "", false, fmt.Errorf("%s: removed by the diff but %d lines remain", p.From, countLines(after))
		}
		return "", false, nil
	}
	return after, true, nil
}

// nextLine takes the first line off *rest, with its newline.
func nextLine(rest *string) string {
	s := *rest
	i := strings.IndexByte(s, '\n') + 1
	if i == 0 {
		i = len(s)
	}
	*rest = s[i:]
	return s[:i]
}

// countLines is how many lines text holds, the last one with or without
// its newline.
func countLines(text string) int {
	n := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		n++
	}
	return n
}

// added is the bytes p's hunks add (an upper bound of what the content
// grows by).
func added(p FilePatch) int {
	n := 0
	for _, h := range p.Hunks {
		for _, l := range h.Lines {
			if l[0] == '+' {
				n += len(l) - 1
			}
		}
	}
	return n
}

// Reverse returns the patch that undoes p: applied to the file p gives, it
// gives the file p was applied to.
func (p FilePatch) Reverse() FilePatch {
	r := FilePatch{From: p.To, To: p.From, Hunks: make([]Hunk, len(p.Hunks))}
	for i, h := range p.Hunks {
		rh := Hunk{OldStart: h.NewStart, OldCount: h.NewCount, NewStart: h.OldStart, NewCount: h.OldCount, Lines: make([]string, len(h.Lines))}
		for j, l := range h.Lines {
			switch l[0] {
			case '+':
				l = "-" + l[1:]
			case '-':
				l = "+" + l[1:]
			}
			rh.Lines[j] = l
		}
		r.Hunks[i] = rh
	}
	return r
}

func name(p FilePatch) string {
	if p.To != "" {
		return p.To
	}
	return p.From
}

// partialFile is what is known of a file whose whole content is not: some
// of its lines, by index.
type partialFile map[int]string

// applyPartial checks p against what is known of the file (its hunks in
// order, their new starts consistent, their context and removed lines
// equal to the known ones) and returns what is known after it.
func applyPartial(p FilePatch, known partialFile) (partialFile, error) {
	after := partialFile{}
	next, delta := 0, 0
	for _, h := range p.Hunks {
		i := at(h.OldStart, h.OldCount)
		if i < next {
			return nil, fmt.Errorf("%s: hunk -%d,%d is out of order", name(p), h.OldStart, h.OldCount)
		}
		if want := at(h.NewStart, h.NewCount); i+delta != want {
			return nil, fmt.Errorf("%s: hunk -%d,%d +%d,%d: new start should be line %d", name(p), h.OldStart, h.OldCount, h.NewStart, h.NewCount, i+delta+1)
		}
		for k, l := range known {
			if k >= next && k < i {
				after[k+delta] = l
			}
		}
		j := i + delta
		for _, l := range h.Lines {
			if l[0] != '+' {
				if have, ok := known[i]; ok && have != l[1:] {
					return nil, fmt.Errorf("%s: hunk -%d,%d: line %d was %q, the diff says %q", name(p), h.OldStart, h.OldCount, i+1, have, l[1:])
				}
				i++
			}
			if l[0] != '-' {
				after[j] = l[1:]
				j++
			}
		}
		next = i
		delta += h.NewCount - h.OldCount
	}
	for k, l := range known {
		if k >= next {
			after[k+delta] = l
		}
	}
	return after, nil
}
