package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestJSONListsUseSnakeCase: every --json list names its fields as the
// event stream and `harness list --json` do (snake_case), not as Go does.
// `models list` and `models prices` printed "Alias", "IDs", "CacheRead".
func TestJSONListsUseSnakeCase(t *testing.T) {
	snake := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	for _, args := range [][]string{
		{"models", "list", "--json"}, {"models", "prices", "--json"}, {"list", "--json"},
	} {
		var out, errOut bytes.Buffer
		require.Equal(t, 0, run(args, strings.NewReader(""), &out, &errOut), "%q: %s", args, errOut.String())
		var v any
		require.NoError(t, json.Unmarshal(out.Bytes(), &v), "%q", args)
		var keys func(v any, under string)
		seen := 0
		keys = func(v any, under string) {
			switch v := v.(type) {
			case []any:
				for _, e := range v {
					keys(e, under)
				}
			case map[string]any:
				for k, e := range v {
					// An ids map's keys are agent ids, data not names.
					if under != "ids" {
						require.Regexp(t, snake, k, "%q: a field name", args)
						seen++
					}
					keys(e, k)
				}
			}
		}
		keys(v, "")
		require.Positive(t, seen, "%q lists something", args)
	}
}
