package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

var samples = []string{
	`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"ls \"a b\"","exit_code":0,"nested":{"x":[1,2,{"y":"}"}]}}}`,
	` { "a" : 1 , "b" : "x\\\"y" , "c" : [ ] , "d" : { } , "e" : null , "f" : true , "g" : -12.5e3 } `,
	`{"long":"` + strings.Repeat(`ab\"c`, 40) + `","after":"ok","n":12345678901}`,
	`{"dup":1,"dup":2}`,
	`{"s":"\u00e9\n","t":"plain","u":"` + strings.Repeat("x", 100) + `"}`,
	`{"arr":["a","b\"]",{"k":"v"},[1,[2]],3]}`,
}

func TestGetMatchesGjson(t *testing.T) {
	t.Parallel()
	for _, s := range samples {
		gjson.Parse(s).ForEach(func(k, v gjson.Result) bool {
			raw := Get(s, k.Str)
			want := gjson.Get(s, gjson.Escape(k.Str))
			require.Equal(t, want.Raw, raw, "%s in %s", k.Str, s)
			require.Equal(t, want.String(), Str(raw), k.Str)
			require.Equal(t, want.Int(), Int(raw), k.Str)
			require.Equal(t, want.Bool(), Bool(raw), k.Str)
			require.Equal(t, want.IsObject(), IsObject(raw), k.Str)
			require.Equal(t, want.IsArray(), IsArray(raw), k.Str)
			require.Equal(t, want.Type == gjson.String, IsString(raw), k.Str)
			require.Equal(t, want.Type == gjson.Number, IsNumber(raw), k.Str)
			return true
		})
	}
	require.Equal(t, "1", Get(samples[3], "dup"), "first field wins, as in gjson")
	require.Equal(t, `"v"`, Get(nth(Get(samples[5], "arr"), 2), "k"))
	require.Equal(t, `"}"`, Get(nth(Path(samples[0], "item", "nested", "x"), 2), "y"))
	require.Equal(t, `"command_execution"`, Path(samples[0], "item", "type"))
	require.Equal(t, "", Path(samples[0], "item", "missing", "x"))
}

// nth returns the raw n-th element (from 0) of array s, or "".
func nth(s string, n int) string {
	var out string
	EachElem(s, func(v string) bool {
		if n == 0 {
			out = v
			return false
		}
		n--
		return true
	})
	return out
}

func TestEachElemMatchesGjson(t *testing.T) {
	t.Parallel()
	arr := Get(samples[5], "arr")
	var got []string
	EachElem(arr, func(v string) bool { got = append(got, v); return true })
	var want []string
	gjson.Parse(arr).ForEach(func(_, v gjson.Result) bool { want = append(want, v.Raw); return true })
	require.Equal(t, want, got)
	EachElem("[]", func(string) bool { t.Fatal("empty array yielded"); return false })
	EachElem(`{"a":1}`, func(string) bool { t.Fatal("object yielded"); return false })
}

func TestBadInputNeverPanics(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "{", `{"`, `{"a`, `{"a"`, `{"a":`, `{"a":"`, `{"a":"\`, `{"a":[`, `{"a":{`,
		`{"a":1,`, `[`, `[1,`, `["\`, "\xff", `{"a":"\xff"}`, `{"a":tru`, `{,}`, `[,]`, `{"a":1 "b":2}`} {
		Each(s, func(k, v string) bool { _ = Str(v); _ = Int(v); _ = Bool(v); return true })
		EachElem(s, func(v string) bool { _ = Get(v, "a"); return true })
		_ = Path(s, "a", "b")
		_ = Fields(s, func(_, rest string) (int, bool) {
			return EachEnd(rest, func(string, string) bool { return true }), true
		})
		_, _ = Object([]byte(s))
	}
}

// TestFieldsMatchesEach: on valid objects Fields and EachEnd give Each's
// fields, and end just past the object, whatever follows it.
func TestFieldsMatchesEach(t *testing.T) {
	t.Parallel()
	for _, s := range samples {
		var want []string
		Each(s, func(k, v string) bool { want = append(want, k, v); return true })
		obj := strings.TrimRight(s, " ")
		for _, tail := range []string{"", `,"x":{"y":1}}`, "}]", ` "z"`} {
			var got []string
			end := EachEnd(obj+tail, func(k, v string) bool { got = append(got, k, v); return true })
			require.Equal(t, want, got, s)
			require.Equal(t, len(obj), end, s+tail)
			got = got[:0]
			end = Fields(obj+tail, func(k, rest string) (int, bool) {
				v := Value(rest)
				got = append(got, k, v)
				if IsObject(v) {
					// Read nested objects in the same pass.
					n := EachEnd(rest, func(string, string) bool { return true })
					require.Equal(t, len(v), n)
					return n, true
				}
				return 0, true
			})
			require.Equal(t, want, got, s)
			require.Equal(t, len(obj), end, s+tail)
		}
	}
	require.Equal(t, 0, EachEnd(`[1]`, func(string, string) bool { return true }))
	stopped := EachEnd(samples[0]+`,"more"}`, func(string, string) bool { return false })
	require.Equal(t, len(samples[0]), stopped, "a stopped walk still ends at the object's end")
}

func FuzzFields(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var rec func(string) int
		rec = func(s string) int {
			return Fields(s, func(k, rest string) (int, bool) {
				if len(rest) == 0 {
					t.Fatal("empty rest")
				}
				if rest[0] == '{' {
					return rec(rest), true
				}
				_ = Str(Value(rest))
				return 0, true
			})
		}
		end := rec(s)
		if end < 0 || end > len(s) {
			t.Fatalf("end %d out of [0,%d]", end, len(s))
		}
		if gjson.Valid(s) && gjson.Parse(s).IsObject() && end != len(strings.TrimRight(s, " \t\r\n")) {
			t.Fatalf("end %d of valid %q", end, s)
		}
	})
}

func FuzzGet(f *testing.F) {
	for _, s := range samples {
		f.Add(s, "a")
	}
	f.Fuzz(func(t *testing.T, s, key string) {
		v := Get(s, key)
		// Compare only where a gjson path is the plain key.
		// Keys with escapes are compared as written, so leave them out.
		if !gjson.Valid(s) || !gjson.Parse(s).IsObject() || !plainKey(key) || strings.ContainsRune(s, '\\') {
			return
		}
		want := gjson.Get(s, key)
		if want.Raw != v {
			t.Fatalf("Get(%q, %q) = %q, gjson %q", s, key, v, want.Raw)
		}
	})
}

// FuzzStr holds Str, on any string value as the walker delimits it,
// escapes and all, to encoding/json where the value is valid JSON (gjson
// loses the character after a lone surrogate), and to gjson elsewhere
// but for \u escapes.
func FuzzStr(f *testing.F) {
	for _, s := range []string{`"a\nb\"c\\d\/e\tf\rg\bh\fi"`, `"\u00e9\n"`, `"\ud83d\ude00"`, `"a\`, `"a\x"`,
		"\"a\\n\x01\"", `"a\"b"`, `"\"`, `"\\"`, `"é\n\xff"`, `"x"`, "\"\x19\\b\"",
		`"a\ud83d\u00e9b"`, `"\ud800\ud83d\ude00"`, `"\udc00\ud800x"`, `"\ud83d"`, `"\uD83D\uDE00"`, `"\u12"`, `"\uzzzz"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !IsString(raw) || skipString(raw, 0) != len(raw) {
			return
		}
		got := Str(raw)
		var want string
		if utf8.ValidString(raw) && json.Unmarshal([]byte(raw), &want) == nil {
			if got != want {
				t.Fatalf("Str(%q) = %q, encoding/json %q", raw, got, want)
			}
		} else if want := gjson.Parse(raw).String(); !strings.Contains(raw, `\u`) && got != want {
			t.Fatalf("Str(%q) = %q, gjson %q", raw, got, want)
		}
	})
}

// TestStrLoneSurrogates: a surrogate without its pair is U+FFFD and the
// escape after it is its own, as encoding/json has it; gjson dropped the
// é of "a\ud83d\u00e9b", and an emoji after a lone high surrogate.
func TestStrLoneSurrogates(t *testing.T) {
	for raw, want := range map[string]string{
		`"a\ud83d\u00e9b"`:       "a\ufffdéb",
		`"\ud800\ud83d\ude00"`:   "\ufffd😀",
		`"\ud800\ud800x"`:        "\ufffd\ufffdx",
		`"\udc00x"`:              "\ufffdx",
		`"\ud83d"`:               "\ufffd",
		`"\uD83D\uDE00\n\u00e9"`: "😀\né",
	} {
		require.Equal(t, want, Str(raw), raw)
	}
}

func plainKey(k string) bool {
	for _, c := range k {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return k != ""
}

// naiveStringEnd is skipString as a byte loop.
func naiveStringEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '"':
			return j + 1
		case '\\':
			j++
		}
	}
	return len(s)
}

// checkStringEnd holds both ways the walker finds the end of the string
// at s[i] to the byte loop: stringEnd, or shortString, then longString.
func checkStringEnd(t testing.TB, s string, i int) {
	want := naiveStringEnd(s, i)
	if got := skipString(s, i); got != want {
		t.Fatalf("skipString(%q, %d) = %d, want %d", s, i, got, want)
	}
	end := shortString(s, i)
	if end <= 0 {
		end = longString(s, -end, i)
	} else if strings.Contains(s[i:end], `\`) {
		t.Fatalf("shortString(%q, %d) = %d, past a backslash", s, i, end)
	}
	if end != want {
		t.Fatalf("shortString, longString(%q, %d) = %d, want %d", s, i, end, want)
	}
}

// TestSkipStringMatchesNaive checks the word-at-a-time scans against a
// byte loop, with quotes and escapes at every offset around their word
// edges and backslashes before the string's opening quote.
func TestSkipStringMatchesNaive(t *testing.T) {
	t.Parallel()
	for n := 0; n < 150; n++ {
		for _, ins := range []string{`\"`, `\\`, `\\\"`, `"`, `\`, `\\"`} {
			for at := 0; at <= n; at += 1 + n/20 {
				body := strings.Repeat("x", at) + ins + strings.Repeat("y", n-at)
				for _, s := range []string{`"` + body, `"` + body + `"`, `"` + body + `","k":1}`} {
					checkStringEnd(t, s, 0)
					checkStringEnd(t, `\`+s, 1)
					checkStringEnd(t, `\\`+s, 2)
				}
			}
		}
	}
}

func FuzzSkipString(f *testing.F) {
	for _, s := range []string{`"a"`, `"a\"b"`, `"\\"`, `"` + strings.Repeat("x", 70) + `\""`, `\"\"`, `"é\\\"\\"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if i := strings.IndexByte(s, '"'); i >= 0 {
			checkStringEnd(t, s, i)
		}
	})
}

func TestLinesCopiesAreStable(t *testing.T) {
	t.Parallel()
	var l Lines
	buf := []byte("first line")
	a := l.Copy(buf)
	copy(buf, "XXXXXXXXXX")
	var kept []string
	for i := range 5000 { // several blocks, and lines too long for one
		line := []byte(strings.Repeat(string(rune('a'+i%26)), i%5000))
		kept = append(kept, l.Copy(line))
	}
	require.Equal(t, "first line", a, "a copy does not share the caller's buffer")
	for i, s := range kept {
		require.Equal(t, strings.Repeat(string(rune('a'+i%26)), i%5000), s, "copy %d changed", i)
	}
	require.Empty(t, l.Copy(nil))
}

// TestLinesBytes: a piece's bytes are a copy its receiver may write to,
// unless the lines stay, when they are the piece itself.
func TestLinesBytes(t *testing.T) {
	t.Parallel()
	var l Lines
	line := l.Copy([]byte(`{"input":{"a":1},"b":2}`))
	piece := line[9:16]
	b := l.Bytes(piece)
	require.Equal(t, `{"a":1}`, string(b))
	b[1] = 'X'
	require.Equal(t, `{"input":{"a":1},"b":2}`, line, "writing a copy changes no line")

	var stay Lines
	stay.Stay()
	mapped := []byte(`{"input":{"a":1}}`)
	line = stay.Copy(mapped)
	b = stay.Bytes(line[9:16])
	require.Equal(t, `{"a":1}`, string(b))
	require.Same(t, &mapped[9], &b[0], "a staying line's piece is handed out as it is")
	require.Equal(t, len(b), cap(b), "and cannot be appended to in place")
}

// FuzzElems holds Elems to EachElem: the same elements, in order, and the
// end of a valid array.
func FuzzElems(f *testing.F) {
	for _, s := range []string{`[]`, `[1,2,3]`, `[{"a":1},"x",[2]]`, `[1 2]`, `[,]`, `[1,`, `["a\"]"]`, ` [ {} ] tail`, `{}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want, got []string
		EachElem(s, func(v string) bool { want = append(want, v); return true })
		odd := false
		end := Elems(s, func(rest string) int {
			n := len(Value(rest))
			got = append(got, rest[:n])
			odd = !odd
			if odd {
				return 0 // Elems skips it itself
			}
			return n
		})
		require.Equal(t, want, got, "%q", s)
		if end < 0 || end > len(s) {
			t.Fatalf("end %d out of [0,%d]", end, len(s))
		}
		if gjson.Valid(s) && gjson.Parse(s).IsArray() && end != len(strings.TrimRight(s, " \t\r\n")) {
			t.Fatalf("end %d of valid %q", end, s)
		}
	})
}

// TestPickMatchesGet: Pick gives for each key what Get gives.
func TestPickMatchesGet(t *testing.T) {
	t.Parallel()
	for _, s := range append(samples, `{"a":1,"b":2,"a":3,"c":{"a":4}}`, `[{"a":1}]`, `{"a":`, "") {
		var a, b, c, missing string
		Pick(s, []string{"a", "b", "c", "missing"}, &a, &b, &c, &missing)
		require.Equal(t, []string{Get(s, "a"), Get(s, "b"), Get(s, "c"), ""}, []string{a, b, c, missing}, s)
	}
	require.Panics(t, func() { var a string; Pick(`{}`, []string{"a", "b"}, &a) })
}

func FuzzPick(f *testing.F) {
	for _, s := range samples {
		f.Add(s, "a", "dup")
	}
	f.Fuzz(func(t *testing.T, s, k1, k2 string) {
		if k1 == k2 {
			return
		}
		var v1, v2 string
		Pick(s, []string{k1, k2}, &v1, &v2)
		if v1 != Get(s, k1) || v2 != Get(s, k2) {
			t.Fatalf("Pick(%q, %q, %q) = %q, %q; Get: %q, %q", s, k1, k2, v1, v2, Get(s, k1), Get(s, k2))
		}
	})
}

// FuzzValueReaders holds StrValue and IntValue, which decode a value as
// they skip it, to Str and Int of Value: the same value and length.
func FuzzValueReaders(f *testing.F) {
	for _, s := range []string{`"a"`, `"a\"b",1`, `"` + strings.Repeat("x", 70) + `"}`, `"a\`, `"\u00e9"`, `12345,`,
		`-7}`, `-`, `1.5e3]`, `123456789012345678901`, `123456789012345678 `, `-0`, `007`, `1x`, `9223372036854775807`, `-9223372036854775808`, `99999999999999999999`, `true`, `null`, `{"a":1}`, `[1]`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		v := Value(rest)
		if s, n := StrValue(rest); s != Str(v) || n != len(v) {
			t.Fatalf("StrValue(%q) = %q, %d; Str(Value) %q, %d", rest, s, n, Str(v), len(v))
		}
		if i, n := IntValue(rest); i != Int(v) || n != len(v) {
			t.Fatalf("IntValue(%q) = %d, %d; Int(Value) %d, %d", rest, i, n, Int(v), len(v))
		}
		if want := gjson.Parse(v).Int(); Int(v) != want {
			t.Fatalf("Int(%q) = %d, gjson %d", v, Int(v), want)
		}
	})
}

// TestShortString: a string shortString ends has no backslash, and a
// short one without is ended by it; any other is ended by longString.
func TestShortString(t *testing.T) {
	t.Parallel()
	for n := 0; n < 90; n++ {
		for at := 0; at <= n; at++ {
			for _, ins := range []string{"", `\"`, `\\`, `\n`} {
				body := strings.Repeat("x", at) + ins + strings.Repeat("y", n-at)
				s := `"` + body + `","k":1}`
				end := shortString(s, 0)
				if end > 0 {
					require.Equal(t, len(body)+2, end, "%q", s)
					require.NotContains(t, body, `\`, "%q", s)
					continue
				}
				require.Equal(t, len(body)+2, longString(s, -end, 0), "%q", s)
				if n < 56 {
					require.Contains(t, body, `\`, "short strings are seen whole: %q", s)
				}
			}
		}
	}
}

// TestPlainRun holds the word-at-a-time scan to a byte loop, with a stop
// byte at every offset around its word edges and bytes that look alike
// (above 0x7f, 0x20) before it.
func TestPlainRun(t *testing.T) {
	t.Parallel()
	naive := func(s string) int {
		for i := 0; i < len(s); i++ {
			if s[i] < ' ' || s[i] == '"' || s[i] == '\\' {
				return i
			}
		}
		return len(s)
	}
	for n := 0; n < 40; n++ {
		for at := 0; at <= n; at++ {
			for _, stop := range []string{"", `"`, `\`, "\n", "\x00", "\x1f"} {
				for _, fill := range []string{"x", " ", "\xff", "\x80"} {
					s := strings.Repeat(fill, at) + stop + strings.Repeat("y", n-at)
					require.Equal(t, naive(s), plainRun(s), "%q", s)
				}
			}
		}
	}
}

// TestFirstInt: the first of duplicate members is kept, and the length
// read is the value's, so that Fields goes on after it.
func TestFirstInt(t *testing.T) {
	var a, b FirstInt
	end := Fields(`{"a":12,"b":x,"a":7} tail`, func(k, rest string) (int, bool) {
		switch k {
		case "a":
			return a.Read(rest), true
		case "b":
			return b.Read(rest), true
		}
		return 0, true
	})
	if a != (FirstInt{N: 12, Seen: true}) || !b.Seen || b.N != 0 || end != len(`{"a":12,"b":x,"a":7}`) {
		t.Fatalf("a %+v, b %+v, end %d", a, b, end)
	}
}

// naiveSkipValue is skipValue as byte loops: a string ends as
// naiveStringEnd has it, a container at its bracket's match outside
// strings, a literal after its letters, a number at numberEnd.
func naiveSkipValue(s string, i int) int {
	switch c := s[i]; {
	case c == '"':
		return naiveStringEnd(s, i)
	case c == '{' || c == '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				j = naiveStringEnd(s, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(s)
	case c == 't' || c == 'f' || c == 'n' && (i+1 >= len(s) || s[i+1] == 'u'):
		j := i + 1
		for j < len(s) && s[j] >= 'a' && s[j] <= 'z' {
			j++
		}
		return j
	}
	j := i + 1
	for j < len(s) && !numberEnd(s[j]) {
		j++
	}
	return j
}

// FuzzSkipValue holds the word-at-a-time walk (stringEnd, longString,
// and skipContainer's run of strings across colons and commas) to the
// byte loops, from every offset of any bytes: the reference for a change
// to how values are skipped, which every parser's leniency rests on.
func FuzzSkipValue(f *testing.F) {
	for _, s := range append(samples, `["a","b",1,{"c":"d\"","e":[]}]`, `{"a":"\\","b":"x"}`, `[nul,nan,"\`, `{"k":"v":"w","x"`) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i := range len(s) {
			if got, want := skipValue(s, i), naiveSkipValue(s, i); got != want {
				t.Fatalf("skipValue(%q, %d) = %d, byte loops %d", s, i, got, want)
			}
		}
	})
}
