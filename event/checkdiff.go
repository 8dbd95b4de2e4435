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
// stream showed, and learns from it. A call that may change files without
// a diff (a shell command, a file tool with none, an MCP tool, a sub-agent)
// makes the checker forget everything it knew: the next diff of a file is
// then only held to itself.
func (c *checker) replay(ev Event, b *ToolEnd) {
	switch b.DiffSkipped {
	case "", DiffSkippedTooLarge, DiffSkippedBinary, DiffSkippedUnknown, DiffSkippedNotRegular:
	default:
		c.fail(ev, "diff_skipped %q", b.DiffSkipped)
	}
	if b.Diff != "" && b.DiffSkipped != "" {
		c.fail(ev, "both a diff and diff_skipped")
	}
	switch b.Kind {
	case KindRead, KindSearch, KindWeb, KindTodo:
		return
	case KindWrite, KindEdit, KindDelete:
		if b.Diff != "" && !b.DiffTruncated {
			break
		}
		fallthrough
	default:
		clear(c.files)
		return
	}
	patches, err := ParsePatch(b.Diff)
	if err != nil {
		c.fail(ev, "diff: %v", err)
		clear(c.files)
		return
	}
	for _, p := range patches {
		if err := c.apply(p); err != nil {
			c.fail(ev, "diff does not apply to the file as the stream showed it: %v", err)
			clear(c.files)
			return
		}
	}
}

// apply applies one file's patch to what is known of the file.
func (c *checker) apply(p FilePatch) error {
	base := c.files[p.From]
	if p.From == "" {
		base = c.files[p.To]
		if base == nil {
			base = &knownFile{full: true} // created: it did not exist
		}
	}
	var after *knownFile
	switch {
	case base == nil:
		lines, err := applyPartial(p, nil)
		if err != nil {
			return err
		}
		after = &knownFile{exists: true, lines: lines}
	case base.full:
		text, exists, err := ApplyPatch(p, base.text, base.exists)
		if err != nil {
			return err
		}
		after = &knownFile{full: true, exists: exists, text: text}
	default:
		if p.From == "" {
			return fmt.Errorf("%s: created by the diff but an earlier diff changed it", p.To)
		}
		lines, err := applyPartial(p, base.lines)
		if err != nil {
			return err
		}
		after = &knownFile{exists: true, lines: lines}
	}
	if p.To == "" {
		c.files[p.From] = &knownFile{full: true} // removed
		return nil
	}
	if p.From != "" && p.From != p.To {
		c.files[p.From] = &knownFile{full: true} // renamed away
	}
	c.files[p.To] = after
	return nil
}

// tokens is u without its cost: what the sum of usage events must give.
func (u Usage) tokens() Usage {
	return Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens, ReasoningTokens: u.ReasoningTokens}
}
