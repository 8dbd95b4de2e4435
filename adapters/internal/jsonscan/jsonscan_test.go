package jsonscan

import (
	"strings"
	"testing"

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
			require.Equal(t, want.String(), Clone(raw), k.Str)
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
	require.Equal(t, `"v"`, Get(Index(Get(samples[5], "arr"), 2), "k"))
	require.Equal(t, `"}"`, Get(Index(Path(samples[0], "item", "nested", "x"), 2), "y"))
	require.Equal(t, `"command_execution"`, Path(samples[0], "item", "type"))
	require.Equal(t, "", Path(samples[0], "item", "missing", "x"))
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
		_ = Index(s, 3)
	}
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

func plainKey(k string) bool {
	for _, c := range k {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return k != ""
}
