package claude

import (
	"slices"
	"strings"

	"github.com/agentharness/harness/adapters/internal/jsonscan"
	"github.com/agentharness/harness/event"
)

// Usage accounting. One usage event per model call, never a snapshot:
//
//   - With --include-partial-messages a call's final counts come with its
//     message_delta (cumulative, as the API sends them); they are emitted
//     at its message_stop. A call Claude abandoned (message_stop with
//     abandoned_blocks: an interrupt, a stream that stalled) follows a
//     synthetic message_delta that repeats the message_start snapshot. Its
//     counts are emitted as they stand (message_start's, overlaid by the
//     message_delta's) at its message_stop: the model read its input, and
//     Claude's cost (total_cost_usd, modelUsage) charges it. Claude leaves
//     the call out of result.usage, so the parser adds what it emitted for
//     such calls to those totals (left), and usage and cost agree.
//   - Without partial messages every assistant line of a call repeats the
//     message_start snapshot: its input and cache counts are final, its
//     output_tokens (1) is a placeholder. The call's input and cache are
//     emitted on its first line; the output is not in the stream.
//   - A sub-agent's calls (lines with a parent_tool_use_id) are not
//     counted: Claude's result.usage totals the main agent's calls, so
//     counting them would make the events exceed the totals. Where the
//     totals do hold them, the last increment carries them.
//   - At the result, whatever Claude's totals hold beyond what was emitted
//     (the output of non-streamed calls, thinking tokens, calls that left
//     no line) is emitted as one last increment, so the usage events add
//     up to result.usage.
//   - A streamed call the output ended in, with no result after it (the
//     agent was stopped mid-call: a watchdog, a kill, a crash; or a
//     capture cut), is emitted at Flush as its counts stood: message_start's
//     input and cache, which are final there, and the output of its last
//     message_delta, if one came (0 if not: message_start's output_tokens
//     is a placeholder). The model read the input, and it is the turn's.

// callUsage is what the parser knows of one model call (API message).
type callUsage struct {
	streamed  bool        // its message_start stream_event was seen
	counted   bool        // its usage was emitted
	final     event.Usage // message_start's input and cache, overlaid by message_delta
	haveFinal bool        // a message_delta came
}

// Fields of an Anthropic usage object, as bits of readUsage's mask.
const (
	hasInput = 1 << iota
	hasOutput
	hasCacheRead
	hasCacheWrite
	hasReasoning
)

// readUsage decodes an Anthropic usage object (raw JSON) in the unified
// meaning, which is Anthropic's: input_tokens leave out the cache, and
// thinking tokens are part of output_tokens. mask tells which fields the
// object has.
func readUsage(raw string) (u event.Usage, mask int) {
	if !jsonscan.IsObject(raw) {
		return u, 0
	}
	jsonscan.Each(raw, func(k, v string) bool {
		if !jsonscan.IsNumber(v) && k != "output_tokens_details" {
			return true
		}
		switch k {
		case "input_tokens":
			u.InputTokens, mask = jsonscan.Int(v), mask|hasInput
		case "output_tokens":
			u.OutputTokens, mask = jsonscan.Int(v), mask|hasOutput
		case "cache_read_input_tokens":
			u.CacheReadTokens, mask = jsonscan.Int(v), mask|hasCacheRead
		case "cache_creation_input_tokens":
			u.CacheWriteTokens, mask = jsonscan.Int(v), mask|hasCacheWrite
		case "output_tokens_details":
			if t := jsonscan.Get(v, "thinking_tokens"); jsonscan.IsNumber(t) {
				u.ReasoningTokens, mask = jsonscan.Int(t), mask|hasReasoning
			}
		}
		return true
	})
	return u, mask
}

// callUsage returns the usage state of message id, creating it. A call
// already counted has no state left: what it gets is a counted one of its
// own, which nothing reads after.
func (p *parser) callUsage(id string) *callUsage {
	cu := p.usage[id]
	if cu == nil {
		if p.counted.Has(id) {
			return &callUsage{counted: true}
		}
		cu = &callUsage{}
		p.usage[strings.Clone(id)] = cu
		if id != "" { // not counted nor in usage: a call not seen before
			p.modelIDs++
		}
	}
	return cu
}

// count marks message id's call counted (its usage emitted) and lets
// its state go.
func (p *parser) count(id string, cu *callUsage) {
	cu.counted = true
	delete(p.usage, id)
	p.counted.Add(id)
}

// emitUsage appends u as an increment and adds it to what was emitted.
func (p *parser) emitUsage(dst []event.Body, u event.Usage) []event.Body {
	if u.IsZero() {
		return dst
	}
	p.emitted.Add(u)
	return append(dst, &u)
}

// usageStart records a streamed call's message_start counts: input and
// cache are final there, output is not.
func (p *parser) usageStart(id, raw string) {
	cu := p.callUsage(id)
	cu.streamed = true
	u, _ := readUsage(raw)
	cu.final = event.Usage{InputTokens: u.InputTokens, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens}
}

// usageDelta overlays a message_delta's cumulative counts.
func (p *parser) usageDelta(id, raw string) {
	u, mask := readUsage(raw)
	if mask == 0 {
		return
	}
	cu := p.callUsage(id)
	cu.streamed = true
	f := &cu.final
	if mask&hasInput != 0 {
		f.InputTokens = u.InputTokens
	}
	if mask&hasOutput != 0 {
		f.OutputTokens = u.OutputTokens
	}
	if mask&hasCacheRead != 0 {
		f.CacheReadTokens = u.CacheReadTokens
	}
	if mask&hasCacheWrite != 0 {
		f.CacheWriteTokens = u.CacheWriteTokens
	}
	if mask&hasReasoning != 0 {
		f.ReasoningTokens = u.ReasoningTokens
	}
	cu.haveFinal = true
}

// usageStop emits a streamed call's usage at its message_stop, once. An
// abandoned call's is what its message_start and message_delta said, and
// is added to left: Claude's result.usage will not hold it.
func (p *parser) usageStop(dst []event.Body, id string, abandoned bool) []event.Body {
	cu := p.usage[id]
	if cu == nil || cu.counted {
		return dst
	}
	if abandoned {
		p.count(id, cu)
		p.left.Add(cu.final)
		return p.emitUsage(dst, cu.final)
	}
	if !cu.haveFinal {
		return dst // no final count: the result's totals will hold it
	}
	p.count(id, cu)
	return p.emitUsage(dst, cu.final)
}

// settle marks every call not counted yet as counted, at a result: its
// totals hold them (a streamed call without a message_delta), and Flush
// must not count them again.
func (p *parser) settle() {
	for id, cu := range p.usage {
		p.count(id, cu)
	}
}

// usageCut emits the usage of each streamed call not counted when the
// output ended (none after a result: settle), in the order of its ids,
// as far as the stream gave it.
func (p *parser) usageCut(dst []event.Body) []event.Body {
	ids := make([]string, 0, len(p.usage))
	for id, cu := range p.usage {
		if cu.streamed && !cu.counted {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		cu := p.usage[id]
		p.count(id, cu)
		dst = p.emitUsage(dst, cu.final)
	}
	return dst
}

// usageLine handles the usage snapshot of an assistant line: for a call
// that was not streamed, its input and cache counts, once.
func (p *parser) usageLine(dst []event.Body, id, raw string) []event.Body {
	if !jsonscan.IsObject(raw) {
		return dst
	}
	cu := p.callUsage(id)
	if cu.streamed || cu.counted {
		return dst
	}
	p.count(id, cu)
	u, _ := readUsage(raw)
	return p.emitUsage(dst, event.Usage{InputTokens: u.InputTokens, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens})
}

// usageRest emits what the agent's totals hold beyond the usage events
// emitted so far, field by field.
func (p *parser) usageRest(dst []event.Body, total event.Usage) []event.Body {
	e := p.emitted
	rest := event.Usage{
		InputTokens:      max(total.InputTokens-e.InputTokens, 0),
		OutputTokens:     max(total.OutputTokens-e.OutputTokens, 0),
		CacheReadTokens:  max(total.CacheReadTokens-e.CacheReadTokens, 0),
		CacheWriteTokens: max(total.CacheWriteTokens-e.CacheWriteTokens, 0),
		ReasoningTokens:  max(total.ReasoningTokens-e.ReasoningTokens, 0),
	}
	return p.emitUsage(dst, rest)
}
