package registry

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxPrice bounds a price, in USD per million tokens: list prices are
// tens of dollars; a larger one is a typo (or 1e308, whose estimate is
// infinite) and would make every cost estimate of its model absurd.
const MaxPrice = 1e6

// FileError is an invalid models file or [models] table: Name is the
// file, Key the dotted key at fault relative to the table ("" for the
// whole table), Err why.
type FileError struct {
	Name, Key string
	Err       error
}

func (e *FileError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("registry: %s: %v", e.Name, e.Err)
	}
	return fmt.Sprintf("registry: %s: %s: %v", e.Name, e.Key, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// ParseTable decodes and validates a models table already decoded from
// TOML (the [models] table of harness.toml, a whole models.toml), as
// ParseFile does. It walks the table once: nothing is encoded again, and
// an unknown key is named without being descended into, so a table
// nested thousands deep costs no more than its size.
func ParseTable(name string, t map[string]any) (File, error) {
	var f File
	fail := func(key string, err error) (File, error) { return File{}, &FileError{Name: name, Key: key, Err: err} }
	var unknown []string
	for _, k := range slices.Sorted(maps.Keys(t)) {
		v := t[k]
		switch k {
		case "source", "updated":
			s, ok := v.(string)
			if !ok {
				return fail(k, errors.New("must be a string"))
			}
			if k == "source" {
				f.Source = s
			} else {
				f.Updated = s
			}
		case "aliases":
			aliases, ok := v.(map[string]any)
			if !ok {
				return fail(k, errors.New("must be a table of [aliases.NAME] tables"))
			}
			f.Aliases = make(map[string]map[string]string, len(aliases))
			for _, alias := range slices.Sorted(maps.Keys(aliases)) {
				ids, ok := aliases[alias].(map[string]any)
				if !ok {
					return fail(keyPath("aliases", alias), errors.New("must be a table of agent = model id"))
				}
				out := make(map[string]string, len(ids))
				for _, agent := range slices.Sorted(maps.Keys(ids)) {
					id, ok := ids[agent].(string)
					if !ok {
						return fail(keyPath("aliases", alias, agent), errors.New("must be a string (the agent's model id)"))
					}
					out[agent] = id
				}
				f.Aliases[alias] = out
			}
		case "prices":
			prices, ok := v.(map[string]any)
			if !ok {
				return fail(k, errors.New(`must be a table of [prices."MODEL-ID"] tables`))
			}
			f.Prices = make(map[string]Price, len(prices))
			for _, id := range slices.Sorted(maps.Keys(prices)) {
				fields, ok := prices[id].(map[string]any)
				if !ok {
					return fail(keyPath("prices", id), errors.New("must be a table of input, output, cache_read, cache_write"))
				}
				var p Price
				for _, field := range slices.Sorted(maps.Keys(fields)) {
					var dst *float64
					switch field {
					case "input":
						dst = &p.Input
					case "output":
						dst = &p.Output
					case "cache_read":
						dst = &p.CacheRead
					case "cache_write":
						dst = &p.CacheWrite
					default:
						unknown = append(unknown, keyPath("prices", id, field))
						continue
					}
					switch n := fields[field].(type) {
					case float64:
						*dst = n
					case int64:
						*dst = float64(n)
					default:
						return fail(keyPath("prices", id, field), errors.New("must be a number (USD per million tokens)"))
					}
				}
				f.Prices[id] = p
			}
		default:
			unknown = append(unknown, keyPath(k))
		}
	}
	if len(unknown) > 0 {
		// A misspelt "prises" would silently drop every price.
		return fail("", unknownKeys(unknown))
	}
	return f, f.Validate(name)
}

// unknownKeys says which keys are unknown on one short line: the first
// few, each cut, and how many more.
func unknownKeys(keys []string) error {
	const shown = 3
	what := "unknown key: "
	if len(keys) > 1 {
		what = "unknown keys: "
	}
	cut := make([]string, 0, shown)
	for _, k := range keys[:min(len(keys), shown)] {
		cut = append(cut, cutKey(k))
	}
	msg := what + strings.Join(cut, ", ")
	if len(keys) > shown {
		msg += fmt.Sprintf(" and %d more", len(keys)-shown)
	}
	return errors.New(msg)
}

// maxKeyRunes bounds a key shown in a message: a key may be as long as
// the file.
const maxKeyRunes = 40

func cutKey(k string) string {
	if utf8.RuneCountInString(k) <= maxKeyRunes {
		return k
	}
	r := []rune(k)
	return string(r[:maxKeyRunes]) + "…"
}

// keyPath joins keys as TOML writes them: a key that is not bare is
// quoted, so that "gpt-5.5" is one key and a control character is
// escaped.
func keyPath(parts ...string) string {
	q := make([]string, len(parts))
	for i, p := range parts {
		q[i] = p
		if !bareKey(p) {
			q[i] = strconv.Quote(p)
		}
	}
	return strings.Join(q, ".")
}

func bareKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Validate checks that every alias maps known agents to non-empty ids,
// each agent once, that every price is a finite number from 0 to
// MaxPrice, and that no two alias names, nor two model ids, differ only
// in case: lookups ignore case, so one of the two would win at random.
// The first problem, in key order, is a *FileError.
func (f File) Validate(name string) error {
	fail := func(key string, format string, args ...any) error {
		return &FileError{Name: name, Key: key, Err: fmt.Errorf(format, args...)}
	}
	aliases := slices.Sorted(maps.Keys(f.Aliases))
	if a, b, ok := caseTwins(aliases); ok {
		return fail("aliases", "%q and %q differ only in case (alias names ignore case)", a, b)
	}
	for _, alias := range aliases {
		if strings.TrimSpace(alias) == "" {
			return fail("", "empty alias name")
		}
		ids := f.Aliases[alias]
		seen := map[string]string{} // canonical agent → the name it was given as
		for _, agent := range slices.Sorted(maps.Keys(ids)) {
			canon, ok := Canonical(agent)
			if !ok {
				return fail(keyPath("aliases", alias), "unknown agent %q (known: %s)", agent, strings.Join(AgentIDs(), ", "))
			}
			if prev, dup := seen[canon]; dup {
				return fail(keyPath("aliases", alias), "%q and %q name the same agent", prev, agent)
			}
			seen[canon] = agent
			if strings.TrimSpace(ids[agent]) == "" {
				return fail(keyPath("aliases", alias, agent), "empty model id")
			}
		}
	}
	ids := slices.Sorted(maps.Keys(f.Prices))
	if a, b, ok := caseTwins(ids); ok {
		return fail("prices", "%q and %q differ only in case (model ids ignore case)", a, b)
	}
	for _, id := range ids {
		if strings.TrimSpace(id) == "" {
			return fail("prices", "empty model id")
		}
		p := f.Prices[id]
		for _, field := range []struct {
			name string
			v    float64
		}{{"input", p.Input}, {"output", p.Output}, {"cache_read", p.CacheRead}, {"cache_write", p.CacheWrite}} {
			if v := field.v; v < 0 || v > MaxPrice || math.IsNaN(v) {
				return fail(keyPath("prices", id, field.name), "%g is not a price (USD per million tokens, 0 to %.0f)", v, float64(MaxPrice))
			}
		}
	}
	return nil
}

// caseTwins returns the first two of the sorted names that are equal but
// for case.
func caseTwins(sorted []string) (a, b string, ok bool) {
	first := make(map[string]string, len(sorted))
	for _, n := range sorted {
		low := strings.ToLower(n)
		if prev, dup := first[low]; dup {
			return prev, n, true
		}
		first[low] = n
	}
	return "", "", false
}
