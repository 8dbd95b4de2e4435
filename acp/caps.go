package acp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/filediff"
)

// Caps of what the mapper keeps, so that its memory stays flat whatever an
// agent streams. The deltas all go out; what is kept for the complete
// forms (a message, a tool_end) is what the Stream would emit of it, and
// the open calls together keep at most maxHeld.
const (
	// keepText is what a message or thought keeps of its chunks: one
	// byte over event.MaxTextBytes, where the Stream cuts it and marks
	// it truncated, as the CLI adapters do.
	keepText = event.MaxTextBytes + 1
	// maxDiffText is the largest oldText or newText a call's diff is
	// made from: the harness diffs no larger file (filediff.MaxFileBytes);
	// a larger one is diff_skipped too_large.
	maxDiffText = filediff.MaxFileBytes
	// maxHeld bounds what all open calls keep together (inputs, outputs,
	// diff texts); past it a call keeps no diff (diff_skipped unknown),
	// no input and no output (output_truncated).
	maxHeld = 16 << 20
	// maxDiffsHeld bounds the diffs a replayed session's mapper holds to
	// check the next ones against (event.DiffReplay).
	maxDiffsHeld = 8 << 20
	// maxDenied bounds the ids of refused calls not yet ended.
	maxDenied = 1024
)

// capped is text kept up to keepText bytes; the rest is dropped.
type capped struct{ b strings.Builder }

func (c *capped) WriteString(s string) {
	if room := keepText - c.b.Len(); room > 0 {
		c.b.WriteString(s[:min(room, len(s))])
	}
}

func (c *capped) Len() int       { return c.b.Len() }
func (c *capped) String() string { return c.b.String() }
func (c *capped) Reset()         { c.b.Reset() }

// keepContent keeps what a call's end shows of its latest content: the
// text up to event.MaxOutputBytes (the end says it was cut), and the diffs
// when each text is one the harness would diff; all within maxHeld.
// Otherwise the end has no diff and says why.
func (m *mapper) keepContent(tc *tool, out string, diffs []diffContent) {
	m.held -= tc.heldOut
	tc.out, tc.diffs, tc.diffSkip, tc.heldOut = "", nil, "", 0
	out, tc.outCut = event.Cut(out, event.MaxOutputBytes)
	if m.held+len(out) > maxHeld {
		out, tc.outCut = "", out != ""
	}
	tc.out = strings.Clone(out) // not a window on the whole text
	n := 0
	for _, d := range diffs {
		if len(d.NewText) > maxDiffText || (d.OldText != nil && len(*d.OldText) > maxDiffText) {
			tc.diffSkip = event.DiffSkippedTooLarge
			break
		}
		n += len(d.NewText)
		if d.OldText != nil {
			n += len(*d.OldText)
		}
	}
	switch {
	case tc.diffSkip != "":
	case m.held+len(tc.out)+n > maxHeld:
		tc.diffSkip = event.DiffSkippedUnknown
	default:
		tc.diffs = diffs
	}
	if len(tc.diffs) == 0 {
		n = 0
	}
	tc.heldOut = len(tc.out) + n
	m.held += tc.heldOut
}

// keepInput bounds what a started call keeps of its input: none when it
// is more than the Stream emits (event.MaxInputBytes) or past maxHeld.
func (m *mapper) keepInput(tc *tool) {
	m.held -= tc.heldInput
	if len(tc.input) > event.MaxInputBytes || m.held+len(tc.input) > maxHeld {
		tc.input = nil
	}
	tc.heldInput = len(tc.input)
	m.held += tc.heldInput
}

// maxClaudeResponse bounds the Claude Code tool result a call keeps: the
// file before the edit (at most maxDiffText, as the harness diffs no
// larger file), the patch and the edit's own strings.
const maxClaudeResponse = 4 * maxDiffText

// keepClaudeResponse keeps Claude Code's tool result of a call (the exact
// data its diff is made from) when it is one the harness would diff and
// fits within maxHeld; otherwise the call's end says why it has no diff.
func (m *mapper) keepClaudeResponse(tc *tool, raw json.RawMessage) {
	m.held -= len(tc.claudeResponse)
	tc.heldMeta -= len(tc.claudeResponse)
	tc.claudeResponse, tc.claudeSkip = nil, ""
	switch {
	case len(raw) > maxClaudeResponse:
		tc.claudeSkip = event.DiffSkippedTooLarge
	case m.held+len(raw) > maxHeld:
		tc.claudeSkip = event.DiffSkippedUnknown
	default:
		tc.claudeResponse = append(json.RawMessage(nil), raw...)
		tc.heldMeta += len(raw)
		m.held += len(raw)
	}
}

// release gives back what an ended call kept.
func (m *mapper) release(tc *tool) {
	m.held -= tc.heldInput + tc.heldOut + tc.heldMeta
}

// kindOf is the ACP kind an open call was announced with, "" for none.
func (m *mapper) kindOf(id string) string {
	if tc := m.open[id]; tc != nil {
		return tc.acpKind
	}
	return ""
}

// callID is the key of a call: its id, or, past event.MaxFieldBytes, a
// prefix of it and a hash of the whole, so that a huge id is neither
// kept nor emitted.
func callID(id string) string {
	if len(id) <= event.MaxFieldBytes {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	prefix, _ := event.Cut(id, 64)
	return prefix + "…" + hex.EncodeToString(sum[:8])
}

// field is a short field (a title, a kind, a path) as kept: cut at
// event.MaxFieldBytes, and copied off the line it came from.
func field(s string) string {
	s, _ = event.Cut(s, event.MaxFieldBytes)
	return strings.Clone(s)
}

// hasInput reports whether raw, a JSON value as decoded, is an object
// with at least one field (read without decoding it: an input may be
// megabytes).
func hasInput(raw json.RawMessage) bool {
	b := bytes.TrimSpace(raw)
	return len(b) > 0 && b[0] == '{' && len(bytes.TrimSpace(b[1:])) > 0 && bytes.TrimSpace(b[1:])[0] != '}'
}

// object returns raw, a JSON value as decoded (no one writes to it),
// when it is an object, else {}.
func object(raw json.RawMessage) json.RawMessage {
	if b := bytes.TrimSpace(raw); len(b) == 0 || b[0] != '{' {
		return json.RawMessage(`{}`)
	}
	return raw
}

// inputPath and inputCommand read one field of an input object (not all
// of it: an input may be megabytes).
func inputPath(raw json.RawMessage) string {
	for _, k := range []string{"file_path", "path", "filePath", "absolute_path"} {
		if v := gjson.GetBytes(raw, k); v.Type == gjson.String && v.Str != "" {
			return v.Str
		}
	}
	return ""
}

func inputCommand(raw json.RawMessage) string {
	switch c := gjson.GetBytes(raw, "command"); {
	case c.Type == gjson.String:
		return c.Str
	case c.IsArray():
		var parts []string
		for _, p := range c.Array() {
			if p.Type == gjson.String {
				parts = append(parts, p.Str)
			}
		}
		return strings.Join(parts, " ")
	}
	return ""
}
