package ansi

import (
	"strings"
	"unicode/utf8"
)

// TermSafe returns s fit to print on a terminal: agent output must not
// drive the user's terminal (OSC 52 clipboard writes, screen clears,
// window titles, cursor moves). Escape sequences are removed whole — CSI
// (ESC [ … final byte), OSC (ESC ] … BEL or ST), DCS/SOS/PM/APC strings
// (ESC P, X, ^, _ … ST), two-byte ESC sequences and their 8-bit C1 forms —
// and so is every other control character but newline and tab; "\r\n"
// becomes "\n" and bytes that are not UTF-8 become U+FFFD. A sequence cut
// at the end of s (split across two deltas) is dropped to the end, so no
// ESC byte ever reaches the terminal and what follows it in the next piece
// prints as plain text. NDJSON output never goes through here: it stays
// byte-faithful, its control characters escaped by JSON.
func TermSafe(s string) string {
	if !needsTermSafe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteRune(utf8.RuneError)
			i++
		case r == '\x1b':
			i = skipEscape(s, i+1)
		case r >= 0x80 && r <= 0x9f: // C1 controls
			i = skipC1(s, r, i+n)
		case r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			i++
		case r == '\n' || r == '\t' || (r >= 0x20 && r != 0x7f):
			b.WriteString(s[i : i+n])
			i += n
		default: // BEL, backspace, a lone CR, DEL, …
			i += n
		}
	}
	return b.String()
}

// needsTermSafe reports whether s holds a control character or a byte
// that is not UTF-8; most text does not, and is printed as it is.
func needsTermSafe(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f || r == utf8.RuneError {
			return true
		}
	}
	return false
}

// skipEscape returns the index after the escape sequence whose ESC was
// just before s[i].
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(s, i+1)
	}
	// ESC with intermediates (0x20–0x2f) and one final byte: charset
	// designations, "ESC c" (reset), "ESC 7", … .
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipC1 returns the index after the sequence an 8-bit control r opens.
func skipC1(s string, r rune, i int) int {
	switch r {
	case 0x9b: // CSI
		return skipCSI(s, i)
	case 0x9d, 0x90, 0x98, 0x9e, 0x9f: // OSC, DCS, SOS, PM, APC
		return skipString(s, i)
	}
	return i
}

// skipCSI skips parameter and intermediate bytes and the final byte; a
// byte that cannot be in a CSI sequence ends it, and is left to the caller.
func skipCSI(s string, i int) int {
	for i < len(s) {
		switch c := s[i]; {
		case c >= 0x40 && c <= 0x7e:
			return i + 1
		case c >= 0x20 && c <= 0x3f:
			i++
		default:
			return i
		}
	}
	return i
}

// skipString skips a control string up to its terminator: BEL, ESC \ or
// the 8-bit ST; an unterminated one runs to the end of s.
func skipString(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == '\a':
			return i + 1
		case s[i] == '\x1b':
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i // a new sequence ends the string
		case strings.HasPrefix(s[i:], "\u009c"):
			return i + len("\u009c")
		}
		i++
	}
	return i
}
