package registry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/fifotest"
)

// TestDeepKeysAreRefused: keys nested thousands deep (a header, a dotted
// key, inline tables) are refused at the key past MaxKeyDepth, before a
// table is built for each level; the deepest keys a models file has pass.
func TestDeepKeysAreRefused(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("a.", 5000) + "a"
	for doc, col := range map[string]int{
		"[x." + deep + "]\n":                   len("[x.") + 2*15 + 1,
		"source = \"s\"\nx." + deep + " = 1\n": len("x.") + 2*15 + 1,
		"[x]\ny = " + strings.Repeat("{a=", 40) + "1" + strings.Repeat("}", 40): len("y = ") + 3*14 + 2, // the 15th a: x, y and 14 a before it
		"[x.a.a.a.a.a.a.a.a.a.a.a.a.a]\nb.c = [{d = 1}]\n":                      len("b.c = [{") + 1,
	} {
		_, err := ParseFile("f", []byte(doc))
		var de *DeepError
		require.ErrorAs(t, err, &de)
		require.Equal(t, col, de.Column, doc[:20])
		require.EqualError(t, err, "registry: f: keys nested more than 16 deep")
	}
	_, err := ParseFile("f", []byte("[prices.\"a.b\"]\ninput = 1\n[aliases.x]\nclaude = \"m\"\n"))
	require.NoError(t, err)
}

// TestUnknownKeysAreOneShortLine: an unknown key is named without being
// descended into, and many make one line: the first three, each cut, and
// a count.
func TestUnknownKeysAreOneShortLine(t *testing.T) {
	t.Parallel()
	// A table nested 300 deep, as a decoder would give it: one key (it
	// was encoded again and every level named: a, a.a, a.a.a, …).
	var nested any = map[string]any{}
	for range 300 {
		nested = map[string]any{"a": nested}
	}
	_, err := ParseTable("f", map[string]any{"a": nested})
	require.EqualError(t, err, "registry: f: unknown key: a")
	var fe *FileError
	require.ErrorAs(t, err, &fe)
	require.Empty(t, fe.Key)

	long := strings.Repeat("é", 100)
	_, err = ParseFile("f", []byte("prises = 1\n\""+long+"\" = 2\n\"a\\u001bb\" = 3\nz = 4\n[prices.m]\nin = 1\n"))
	require.EqualError(t, err, `registry: f: unknown keys: "a\x1bb", prices.m.in, prises and 2 more`)
	_, err = ParseFile("f", []byte("\""+long+"\" = 2\n"))
	require.EqualError(t, err, "registry: f: unknown key: \""+strings.Repeat("é", 39)+"…")
}

// TestCaseTwinsAreRefused: names that differ only in case in one file
// (aliases, model ids) or agents of an alias that are the same agent
// resolved at random: lookups ignore case, and a map has no order.
func TestCaseTwinsAreRefused(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]string{
		"[aliases.Fast]\nclaude = \"a\"\n[aliases.fast]\nclaude = \"b\"\n": `registry: f: aliases: "Fast" and "fast" differ only in case (alias names ignore case)`,
		"[prices.M]\ninput = 1\n[prices.m]\ninput = 2\n":                   `registry: f: prices: "M" and "m" differ only in case (model ids ignore case)`,
		"[aliases.x]\nclaude = \"a\"\nClaude = \"b\"\n":                    `registry: f: aliases.x: "Claude" and "claude" name the same agent`,
		"[aliases.x]\nclaude = \"a\"\nclaude-code = \"b\"\n":               `registry: f: aliases.x: "claude" and "claude-code" name the same agent`,
	} {
		_, err := ParseFile("f", []byte(doc))
		require.EqualError(t, err, want, doc)
	}
	// The project table is checked alike.
	_, err := Load("", &File{Prices: map[string]Price{"GPT": {}, "gpt": {}}})
	require.ErrorContains(t, err, `"GPT" and "gpt" differ only in case`)
}

// TestPricesAreFiniteAndBounded: a price must be a number from 0 to
// MaxPrice; 1e308 made every estimate of its model infinite.
func TestPricesAreFiniteAndBounded(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"1e308", "1000000.5", "-1", "inf", "nan"} {
		_, err := ParseFile("f", []byte("[prices.m]\ninput = "+v+"\n"))
		require.ErrorContains(t, err, "registry: f: prices.m.input: ", v)
		require.ErrorContains(t, err, " is not a price (USD per million tokens, 0 to 1000000)", v)
	}
	f, err := ParseFile("f", []byte("[prices.m]\ninput = 1000000\noutput = 0\ncache_read = 2\n"))
	require.NoError(t, err)
	require.Equal(t, Price{Input: MaxPrice, CacheRead: 2}, f.Prices["m"])
}

// TestUpdateRefusesAFIFO: a named pipe given to models update --from was
// opened for reading, which waits for a writer: the command hung.
func TestUpdateRefusesAFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := fifotest.Make(t, filepath.Join(dir, "models.toml"))
	_, err := Update(fifo, filepath.Join(dir, "cache", "models.toml"), nil)
	require.EqualError(t, err, "registry: update from "+fifo+": open "+fifo+": not a regular file (a FIFO)")
	_, err = os.Stat(filepath.Join(dir, "cache"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing written")
}

// TestUpdateMasksThePassword: the password of a URL given to models
// update was printed in its errors; it is masked (urlmask: the user too),
// wherever the URL is named (a fetch error quoting it whole, a file that
// does not parse, one without aliases or prices), and what the error
// wraps is still found.
func TestUpdateMasksThePassword(t *testing.T) {
	t.Parallel()
	const from = "http://user:s3cret-pw@127.0.0.1:1/models.toml"
	cache := filepath.Join(t.TempDir(), "models.toml")
	check := func(err error) {
		t.Helper()
		require.Error(t, err)
		require.NotContains(t, err.Error(), "s3cret-pw")
		require.Contains(t, err.Error(), "http://***@127.0.0.1:1/models.toml")
	}
	_, err := Update(from, cache, nil) // a real GET: nothing listens on port 1
	check(err)
	boom := errors.New("boom")
	_, err = Update(from, cache, func(url string) ([]byte, error) {
		return nil, &wrapped{"GET " + url + " failed", boom}
	})
	check(err)
	require.ErrorIs(t, err, boom)
	for _, body := range []string{"[prices.m]\ninput = -1\n", "not toml", "source = \"x\"\n"} {
		_, err = Update(from, cache, func(string) ([]byte, error) { return []byte(body), nil })
		check(err)
	}
}

type wrapped struct {
	msg string
	err error
}

func (e *wrapped) Error() string { return e.msg }
func (e *wrapped) Unwrap() error { return e.err }
