package gemini

import (
	"unicode/utf8"

	"github.com/agentharness/harness/event"
)

// maxChunks bounds how many chunk ends a run keeps, so that a flood of
// empty or one-byte deltas cannot grow memory either.
const maxChunks = 1 << 16

// chunks is the text of one run of assistant deltas, kept for its
// complete message and for telling a retry's replay: at most
// event.MaxTextBytes of it, so that one endless message keeps memory flat.
// The deltas themselves are all streamed; only what is kept is cut.
type chunks struct {
	buf  []byte // the text kept
	ends []int  // where each kept chunk ends in buf
	cut  bool   // text was dropped: buf is the start of the message only
}

func (c *chunks) n() int { return len(c.ends) }

func (c *chunks) empty() bool { return len(c.ends) == 0 && len(c.buf) == 0 }

func (c *chunks) start(i int) int {
	if i == 0 {
		return 0
	}
	return c.ends[i-1]
}

// is reports whether kept chunk i is s.
func (c *chunks) is(i int, s string) bool { return string(c.buf[c.start(i):c.ends[i]]) == s }

// upTo returns the text of the first n kept chunks.
func (c *chunks) upTo(n int) string {
	if n == 0 {
		return ""
	}
	return string(c.buf[:c.ends[n-1]])
}

// add keeps s as the next chunk, or as much of it as fits.
func (c *chunks) add(s string) {
	if c.cut {
		return
	}
	if room := event.MaxTextBytes - len(c.buf); len(s) > room || len(c.ends) == maxChunks {
		if len(c.ends) == maxChunks {
			room = 0
		}
		for room > 0 && room < len(s) && !utf8.RuneStart(s[room]) {
			room--
		}
		c.buf = append(c.buf, s[:max(room, 0)]...)
		c.cut = true
		return
	}
	c.buf = append(c.buf, s...)
	c.ends = append(c.ends, len(c.buf))
}

// repeat keeps the first n chunks again, one by one.
func (c *chunks) repeat(n int) {
	for i := range n {
		c.add(string(c.buf[c.start(i):c.ends[i]]))
	}
}

func (c *chunks) reset() {
	c.buf, c.ends, c.cut = c.buf[:0], c.ends[:0], false
}
