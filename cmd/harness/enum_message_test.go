package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/require"
)

// TestEnumMessagesListRealValues: every flag whose enum ends in "" (the
// value meaning "not given", enum:"a,b,") was refused with a message that
// offered "" among its values: `--format must be one of
// "ndjson","text","json","" but got "x"`. Each such flag of every command
// is given a bad value here, and its message lists only real values.
func TestEnumMessagesListRealValues(t *testing.T) {
	isolate(t)
	var c cli
	parser, err := kong.New(&c, parseVars(nil))
	require.NoError(t, err)
	checked := 0
	err = kong.Visit(parser.Model, func(n kong.Visitable, next kong.Next) error {
		node, ok := n.(*kong.Node)
		if !ok {
			return next(nil)
		}
		for _, f := range node.Flags {
			if f.Enum == "" || !slices.Contains(f.EnumSlice(), "") {
				continue
			}
			args := append(strings.Fields(node.Path()), "--"+f.Name, "bogus")
			t.Run(node.Path()+" --"+f.Name, func(t *testing.T) {
				r := invoke(t, "", args...)
				require.Equal(t, exitUsage, r.code, r.stderr)
				require.Contains(t, r.stderr, "--"+f.Name+" must be one of \"", "an enum message")
				require.NotContains(t, r.stderr, `""`)
				require.True(t, strings.HasSuffix(r.stderr, `" but got "bogus"`+"\n"), r.stderr)
			})
			checked++
		}
		return next(nil)
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, checked, 6, "run's --permissions, -f and --protocol, parse's, session's and acp's flags at least")
}

func TestEnumValues(t *testing.T) {
	for in, want := range map[string]string{
		`--format must be one of "ndjson","text","json","" but got "x"`: `--format must be one of "ndjson","text","json" but got "x"`,
		`--p must be one of "","a" but got "b"`:                         `--p must be one of "a" but got "b"`,
		`--r must be one of "table","csv" but got "q"`:                  `--r must be one of "table","csv" but got "q"`,
		`--f must be one of "a","" but got "\",\"\" but got \"\""`:      `--f must be one of "a" but got "\",\"\" but got \"\""`,
		`unexpected argument x`:                                         `unexpected argument x`,
		`--f must be one of "a","b but got "c"`:                         `--f must be one of "a","b but got "c"`, // not kong's shape: as it is
	} {
		require.Equal(t, want, enumValues(in), in)
	}
}
