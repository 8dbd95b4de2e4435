package ansi

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTermSafe(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain text\n\twith tab":                      "plain text\n\twith tab",
		"héllo ✓ \uFFFD":                              "héllo ✓ \uFFFD",
		"\x1b]52;c;aGVsbG8gd29ybGQ+Lz0=\x07copied":    "copied",
		"\x1b]52;c;aGVsbG8=\x1b\\copied":              "copied",
		"\x1b]0;evil title\x07x":                      "x",
		"a\x1b[2J\x1b[Hb\x1b[3;1Hc":                   "abc",
		"\x1b[?1049h\x1b[?25lalt":                     "alt",
		"\u009b2Jc1 csi \u009d0;t\u009cok":            "c1 csi ok",
		"\x1bPdcs string\x1b\\after":                  "after",
		"bell\a back\bspace del\x7f":                  "bell backspace del",
		"crlf\r\nkept":                                "crlf\nkept",
		"over\rwrite":                                 "overwrite",
		"esc c reset\x1bc done":                       "esc c reset done",
		"charset \x1b(Bok":                            "charset ok",
		"cut at the end \x1b]52;c;aGVsbG8":            "cut at the end ",
		"lone esc at end \x1b":                        "lone esc at end ",
		"bad utf8 \xff\xfe end":                       "bad utf8 \uFFFD\uFFFD end",
		"raw 8-bit csi \x9b2J":                        "raw 8-bit csi \uFFFD2J",
		"esc then newline \x1b\nnext":                 "esc then newline \nnext",
		"csi cut by newline \x1b[12\nnext":            "csi cut by newline \nnext",
		"osc cut by a new escape \x1b]0;t\x1b[31mred": "osc cut by a new escape red",
	} {
		got := TermSafe(in)
		require.Equal(t, want, got, "%q", in)
		require.NotContains(t, got, "\x1b", "%q", in)
	}
}

func FuzzTermSafe(f *testing.F) {
	f.Add("\x1b]52;c;aGk=\x07x\u009b2J\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		out := TermSafe(s)
		for _, r := range out {
			if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f {
				t.Fatalf("control %U left in %q (from %q)", r, out, s)
			}
		}
	})
}
