package adapters

import (
	"slices"
	"strings"
	"testing"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/aymanbagabas/go-udiff/lcs"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

func TestClassifyError(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"":                               "",
		"something odd happened":         "",
		"API Error: 529 Overloaded":      event.ClassOverloaded,
		"Selected model is at capacity.": event.ClassOverloaded,
		"We’re currently experiencing high demand":  event.ClassOverloaded,
		"429 Too Many Requests":                     event.ClassRateLimit,
		"Invalid API key · Please run /login":       event.ClassAuth,
		"HTTP 401":                                  event.ClassAuth,
		"prompt is too long: 210000 tokens":         event.ClassContextOverflow,
		"API Error: 500 internal server error":      event.ClassServerError,
		"mockmodel: scripted internal server error": event.ClassServerError,
		`{"code":"internal_server_error"}`:          event.ClassServerError,
		"502 Bad Gateway":                           event.ClassServerError,
		"panic: runtime error":                      event.ClassCrash,
		"connect ECONNREFUSED 127.0.0.1:9":          event.ClassNetwork,
		"stream disconnected before completion":     event.ClassNetwork,
		"model not found":                           event.ClassBadRequest,
		"took 15000 ms":                             "",
		"status 5000":                               "",
		"Request failed with status code 429.":      event.ClassRateLimit,
		`{"error":{"code":429}}`:                    event.ClassRateLimit,
		// A crash's stack trace: its line numbers and addresses are no
		// HTTP statuses (cli.js:429 made a rate limit of a TypeError).
		"TypeError: Cannot read properties of undefined\n    at Object.run (file:///x/cli.js:429:17)":     "",
		"file:///x/cli.js:401\n    throw new TypeError(\"x\")":                                            "",
		"SIGSEGV: segmentation violation\nPC=0x40a7ee m=0 sigcode=0 addr=0x429\n\t/src/main.go:403 +0x1d": event.ClassCrash,
		// An errno name is a word of its own: FileNotFoundError holds
		// "enotfound".
		"Traceback (most recent call last):\n  File \"a.py\", line 3\nFileNotFoundError: [Errno 2] No such file": event.ClassCrash,
		"getaddrinfo ENOTFOUND api.anthropic.com": event.ClassNetwork,
		"Error: read ECONNRESET":                  event.ClassNetwork,
	} {
		require.Equal(t, want, ClassifyError(text), text)
	}
}

func TestClassifyStatus(t *testing.T) {
	t.Parallel()
	for code, want := range map[int]string{200: "", 401: event.ClassAuth, 403: event.ClassAuth, 404: event.ClassBadRequest,
		413: event.ClassContextOverflow, 429: event.ClassRateLimit, 500: event.ClassServerError, 502: event.ClassServerError, 503: event.ClassOverloaded, 529: event.ClassOverloaded} {
		require.Equal(t, want, ClassifyStatus(code), code)
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	require.Empty(t, Diff("a.txt", Present("same\n"), Present("same\n")))
	d := Diff("/w/a.txt", File{}, Present("new\n"))
	require.Contains(t, d, "--- /dev/null")
	require.Contains(t, d, "+++ b/w/a.txt")
	require.Contains(t, d, "+new")
	d = Diff("a.txt", Present("old\nkeep\n"), Present("new\nkeep\n"))
	require.Contains(t, d, "-old")
	require.Contains(t, d, "+new")
	require.Equal(t, "x\ny\n", JoinDiffs("x", "", "y\n"))
}

func TestRedactedArgv(t *testing.T) {
	t.Parallel()
	c := Command{Argv: []string{"agent", "-p", "secret prompt"}, PromptIndex: 2}
	require.Equal(t, []string{"agent", "-p", "<prompt>"}, c.RedactedArgv())
	require.Equal(t, "secret prompt", c.Argv[2], "the original is untouched")
	c.PromptIndex = -1
	require.Equal(t, c.Argv, c.RedactedArgv())
}

func TestLineTruncated(t *testing.T) {
	t.Parallel()
	w := LineTruncated(10, 5)
	require.Equal(t, event.WarnLineTruncated, w.Code)
	require.Equal(t, int64(15), w.Bytes)
	require.True(t, strings.Contains(w.Message, "15 bytes"))
}

func BenchmarkClassifyError(b *testing.B) {
	for b.Loop() {
		ClassifyError("API Error: 500 mockllm: scripted internal server error. This is a server-side issue, usually temporary")
	}
}

// BenchmarkDiff is the diff of one replace on a small file, the diff
// agents' streams ask for after every edit.
func BenchmarkDiff(b *testing.B) {
	before := "package main\n\nfunc hello() string {\n\treturn \"hello\"\n}\n\nfunc main() {\n\tprintln(hello())\n}\n"
	after := strings.Replace(before, "hello()", "hi()", 1)
	b.ReportAllocs()
	for b.Loop() {
		Diff("greet.go", Present(before), Present(after))
	}
}

func FuzzWholeFileMatchesUdiff(f *testing.F) {
	for _, s := range []string{"a\nb\n", "a\nb", "x", "\n", "\n\n", "line\r\nwith crlf\r\n", "é\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if text == "" {
			return
		}
		require.Equal(t, udiff.Unified("/dev/null", "b/f.txt", "", text), Diff("f.txt", File{}, Present(text)), "new file %q", text)
		require.Equal(t, udiff.Unified("a/f.txt", "/dev/null", text, ""), Diff("f.txt", Present(text), File{}), "removed file %q", text)
	})
}

// FuzzUnifiedMatchesUdiff holds Diff's own rendering of udiff's hunks to
// udiff.Unified, byte for byte.
func FuzzUnifiedMatchesUdiff(f *testing.F) {
	for _, s := range [][2]string{{"a\nb\n", "a\nc\n"}, {"a\nb", "a\nb\n"}, {"\n\nc\n", "\n"}, {"x", "y"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n2\nX\n4\n5\n6\n7\n8\nY\n10\n"}, {"", "a\n"}, {"a\n", ""},
		// A last line without its newline, changed, removed or followed.
		{"a\nb\nc", "a\nX"}, {"x\ny", "x"}, {"a\nb", "a\nb\nc"}, {"a", "a\nb"}, {"a\nb\nc", "a\nb\nc\n"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, before, after string) {
		require.Equal(t, udiff.Unified("a/f", "b/f", before, after), unified("f", before, after), "%q → %q", before, after)
	})
}

// TestLineDiffsMatchLCS holds lineDiffs to lcs.DiffLines on every pair of
// texts of up to 5 lines drawn from 3 (repeats are where pairings tie),
// and of up to 4 lines from 4, the last line of each with or without
// its newline: where lineDiffs answers without the search, it must be
// the search's answer.
func TestLineDiffsMatchLCS(t *testing.T) {
	t.Parallel()
	texts := func(alphabet []string, maxLen int) [][]string {
		out := [][]string{nil}
		for prev := [][]string{nil}; maxLen > 0; maxLen-- {
			var next [][]string
			for _, p := range prev {
				for _, l := range alphabet {
					next = append(next, append(slices.Clip(p), l))
				}
			}
			out, prev = append(out, next...), next
		}
		return out
	}
	compared := 0
	for _, set := range []struct {
		alphabet []string
		maxLen   int
	}{{[]string{"a\n", "b\n", "c\n"}, 5}, {[]string{"a\n", "b\n", "c\n", "d\n"}, 4}, {[]string{"a\n", "b\n", "a"}, 4}} {
		all := texts(set.alphabet, set.maxLen)
		for _, a := range all {
			for _, b := range all {
				want, got := lcs.DiffLines(a, b), lineDiffs(a, b)
				if len(want) == 0 && len(got) == 0 {
					continue
				}
				if !slices.Equal(want, got) {
					t.Fatalf("%q → %q: lineDiffs %v, lcs.DiffLines %v", a, b, got, want)
				}
				compared++
			}
		}
	}
	require.Positive(t, compared)
}

func TestHTTPStatus(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]int{
		"API Error: 500 mockmodel: scripted internal server error": 500,
		`{"error":{"code":503,"message":"x"}}`:                     503,
		"request failed with status 429":                           429,
		"status 5000":                                              0,
		"took 500 ms":                                              0,
		"status 200":                                               0,
		"":                                                         0,
	} {
		require.Equal(t, want, HTTPStatus(text), text)
	}
}
