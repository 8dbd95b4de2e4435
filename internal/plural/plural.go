// Package plural owns the counts harness writes for people to read ("1
// turn", "2 turns"): the singular for one, the noun and an s otherwise.
package plural

import "strconv"

// Count returns n and noun, plural unless n is 1 or -1.
func Count(n int64, noun string) string {
	s := strconv.FormatInt(n, 10) + " " + noun
	if n == 1 || n == -1 {
		return s
	}
	return s + "s"
}
