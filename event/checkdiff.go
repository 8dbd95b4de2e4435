package event

import "fmt"

// knownFile is what the diffs of a stream showed of one file: its whole
// content (full) from a creation, a removal or a diff applied to content
// already known; else the lines the diffs showed, by index.
type knownFile struct {
	full   bool
	exists bool
	text   string
	lines  partialFile
}

// replay holds a file tool's diff to the content the earlier diffs of the
// stream showed, and learns from it (DiffReplay).
func (c *checker) replay(ev Event, b *ToolEnd) {
	switch b.DiffSkipped {
	case "", DiffSkippedTooLarge, DiffSkippedBinary, DiffSkippedUnknown, DiffSkippedNotRegular:
	default:
		c.fail(ev, "diff_skipped %q", b.DiffSkipped)
	}
	if b.Diff != "" && b.DiffSkipped != "" {
		c.fail(ev, "both a diff and diff_skipped")
	}
	if err := c.diffs.Apply(b); err != nil {
		c.fail(ev, "%v", err)
	}
}

// DiffReplay is what the diffs of a stream showed of each file, held as
// CheckNDJSON holds a stream to them. A parser that passes on the agent's
// own diffs (not made from content it knows) passes each tool_end it
// emits through Apply, and drops a diff that contradicts the earlier ones
// rather than break the stream's invariant. The zero value knows nothing.
type DiffReplay struct {
	// Limit, when set, bounds the bytes of diffs held (a parser's memory):
	// the diff that would go past it is refused, and everything forgotten.
	// The parser drops that diff, and a file tool with no diff makes the
	// stream's checker forget everything too: both start afresh together.
	Limit int

	files   map[string]knownFile // by diff header path
	held    int                  // bytes of the diffs learnt since the last forget
	scratch patchScratch
}

// Apply holds the diff of b, as the stream carries it (a diff over
// MaxOutputBytes is cut), to the content the earlier diffs showed, and
// learns from it. A call that may change files without a diff (a shell
// command, a file tool with none or with a cut one, an MCP tool, a
// sub-agent) makes it forget everything it knew: the next diff of a file
// is then only held to itself. An error says why the diff does not hold;
// everything is forgotten then too.
func (r *DiffReplay) Apply(b *ToolEnd) error {
	learns, forgets := Replays(b)
	if forgets {
		r.forget()
	}
	if !learns {
		return nil
	}
	if r.Limit > 0 && r.held+len(b.Diff) > r.Limit {
		r.forget()
		return fmt.Errorf("diff: more than %d bytes of diffs to hold", r.Limit)
	}
	r.held += len(b.Diff)
	patches, err := r.scratch.parse(b.Diff)
	if err != nil {
		r.forget()
		return fmt.Errorf("diff: %w", err)
	}
	if r.files == nil {
		r.files = map[string]knownFile{}
	}
	for _, p := range patches {
		if err := r.apply(p); err != nil {
			r.forget()
			return fmt.Errorf("diff does not apply to the file as the stream showed it: %w", err)
		}
	}
	return nil
}

// Replays reports what DiffReplay.Apply does with b: learn from its diff
// (a file tool with its whole diff), forget everything (any other call
// that may change files), or neither (a read, search, web or todo call).
func Replays(b *ToolEnd) (learns, forgets bool) {
	switch b.Kind {
	case KindRead, KindSearch, KindWeb, KindTodo:
		return false, false
	case KindWrite, KindEdit, KindDelete:
		if b.Diff != "" && !b.DiffTruncated && len(b.Diff) <= MaxOutputBytes {
			return true, false
		}
	}
	return false, true
}

func (r *DiffReplay) forget() {
	if len(r.files) > 0 { // clear walks the whole table, however empty: most calls have nothing to forget
		clear(r.files)
	}
	r.held = 0
}

// apply applies one file's patch to what is known of the file.
func (r *DiffReplay) apply(p FilePatch) error {
	base, known := r.files[p.From]
	if p.From == "" {
		base, known = r.files[p.To]
		if !known {
			base, known = knownFile{full: true}, true // created: it did not exist
		}
	}
	var after knownFile
	switch {
	case !known:
		lines, err := applyPartial(p, nil)
		if err != nil {
			return err
		}
		after = knownFile{exists: true, lines: lines}
	case base.full:
		text, exists, err := ApplyPatch(p, base.text, base.exists)
		if err != nil {
			return err
		}
		after = knownFile{full: true, exists: exists, text: text}
	default:
		if p.From == "" {
			return fmt.Errorf("%s: created by the diff but an earlier diff changed it", p.To)
		}
		lines, err := applyPartial(p, base.lines)
		if err != nil {
			return err
		}
		after = knownFile{exists: true, lines: lines}
	}
	if p.To == "" {
		r.files[p.From] = knownFile{full: true} // removed
		return nil
	}
	if p.From != "" && p.From != p.To {
		r.files[p.From] = knownFile{full: true} // renamed away
	}
	r.files[p.To] = after
	return nil
}

// tokens is u without its cost: what the sum of usage events must give.
func (u Usage) tokens() Usage {
	return Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens, ReasoningTokens: u.ReasoningTokens}
}
