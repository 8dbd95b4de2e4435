// Package ansi removes terminal escape sequences from text read off a
// terminal or printed for one.
package ansi

import (
	"regexp"
	"sync"
)

// pattern is the one of github.com/acarl005/stripansi (MIT): CSI and OSC
// sequences, 7- and 8-bit.
const pattern = "[\u001B\u009B][[\\]()#;?]*(?:(?:(?:[a-zA-Z\\d]*(?:;[a-zA-Z\\d]*)*)?\u0007)|(?:(?:\\d{1,4}(?:;\\d{0,4})*)?[\\dA-PRZcf-ntqry=><~]))"

// re is compiled when first needed: most runs never see a terminal.
var re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })

// Strip returns s without its escape sequences.
func Strip(s string) string { return re().ReplaceAllString(s, "") }
