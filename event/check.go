package event

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sync"
)

var runIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^run_[0-9A-HJKMNP-TV-Z]{26}$`) })

// CheckNDJSON checks a whole NDJSON stream against the stream invariants of
// docs/events.md, framing included (every line parses, none is blank or over
// MaxLineBytes, the stream ends with a newline). It returns every violation
// found, joined, or nil.
func CheckNDJSON(data []byte) error {
	var errs []error
	if len(data) == 0 {
		return errors.New("empty stream")
	}
	if data[len(data)-1] != '\n' {
		errs = append(errs, errors.New("stream does not end with a newline"))
	}
	var evs []Event
	for n, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			errs = append(errs, fmt.Errorf("line %d: blank line", n+1))
			continue
		}
		if len(line) > MaxLineBytes {
			errs = append(errs, fmt.Errorf("line %d: %d bytes, over the 1 MiB limit", n+1, len(line)))
		}
		ev, err := Decode(line)
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", n+1, err))
			continue
		}
		evs = append(evs, ev)
	}
	if err := Check(evs); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Check checks decoded events against the stream invariants of
// docs/events.md. It returns every violation found, joined, or nil.
//
// Two of them replay the stream. Usage: the usage events must sum to
// result.usage, token field by token field (not cost). No flag says
// whether the agent reported totals: the Stream puts the agent's totals in
// result.usage when it reports them and the sum of the events when it does
// not, so the sum must equal result.usage either way; a run with no usage
// has zero totals. Diffs: every tool_end diff must apply exactly
// (ParsePatch, ApplyPatch) to its files as the earlier diffs showed them;
// a diff on a file never shown whole must be consistent with itself and
// with the lines earlier diffs showed. A call that may change files
// without a diff (a shell command, an MCP tool, a sub-agent, a file tool
// without a whole diff) makes Check forget what it knew of every file.
func Check(evs []Event) error {
	c := checker{starts: map[string]int64{}, ended: map[string]bool{}}
	for i, ev := range evs {
		c.event(i, ev, len(evs))
	}
	c.end(evs)
	return errors.Join(c.errs...)
}

type checker struct {
	errs      []error
	run       string
	lastTS    int64
	starts    map[string]int64 // open tool calls: call_id -> seq
	ended     map[string]bool
	toolCalls int64
	natives   int64 // native events, which stats.events does not count
	timeout   bool  // a fatal idle/hard timeout error was seen
	interrupt bool
	usage     Usage      // the sum of the usage events
	diffs     DiffReplay // what earlier diffs showed of each file
	turns     turnCheck  // a live session's turns (turns.go)
}

func (c *checker) fail(ev Event, format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("seq %d (%s): %s", ev.Seq, ev.Type, fmt.Sprintf(format, args...)))
}

func (c *checker) event(i int, ev Event, n int) {
	if ev.V != Version {
		c.fail(ev, "v is %d, want %d", ev.V, Version)
	}
	if !ev.Type.Valid() || ev.Body == nil || ev.Body.EventType() != ev.Type {
		c.fail(ev, "unknown or mismatched type")
		return
	}
	if i == 0 {
		c.run = ev.Run
		if !runIDPattern().MatchString(ev.Run) {
			c.fail(ev, "run id %q is not run_ + a ULID", ev.Run)
		}
	} else if ev.Run != c.run {
		c.fail(ev, "run %q differs from the first event's %q", ev.Run, c.run)
	}
	if ev.Seq != int64(i+1) {
		c.fail(ev, "seq is %d, want %d", ev.Seq, i+1)
	}
	if ev.TS < c.lastTS {
		c.fail(ev, "ts %d goes back from %d", ev.TS, c.lastTS)
	}
	c.lastTS = ev.TS
	if (ev.Type == TypeSessionStart) != (i == 0) {
		c.fail(ev, "session_start must be the first event and only the first")
	}
	if (ev.Type == TypeResult) != (i == n-1) {
		c.fail(ev, "result must be the last event and only the last")
	}
	c.body(ev)
}

func (c *checker) body(ev Event) {
	c.turn(ev)
	switch b := ev.Body.(type) {
	case *SessionStart:
		if b.Agent == "" {
			c.fail(ev, "agent is empty")
		}
		if b.Argv == nil {
			c.fail(ev, "argv is missing")
		}
	case *Message:
		if b.Role != RoleAssistant && b.Role != RoleUser && b.Role != RoleSystem {
			c.fail(ev, "role %q", b.Role)
		}
	case *ToolStart:
		c.toolCalls++
		if b.CallID == "" || b.Name == "" || !b.Kind.Valid() {
			c.fail(ev, "call_id, name or kind missing or invalid (%q %q %q)", b.CallID, b.Name, b.Kind)
		}
		if len(b.Input) == 0 || b.Input[0] != '{' {
			c.fail(ev, "input is not a JSON object")
		}
		if _, open := c.starts[b.CallID]; open || c.ended[b.CallID] {
			c.fail(ev, "call_id %q is not unique", b.CallID)
		}
		c.starts[b.CallID] = ev.Seq
	case *ToolEnd:
		if _, open := c.starts[b.CallID]; !open {
			c.fail(ev, "tool_end %q without an open tool_start", b.CallID)
		}
		delete(c.starts, b.CallID)
		c.ended[b.CallID] = true
		switch b.Status {
		case StatusOK, StatusError, StatusTimeout, StatusDenied, StatusCancelled:
		default:
			c.fail(ev, "status %q", b.Status)
		}
		if !b.Kind.Valid() {
			c.fail(ev, "kind %q", b.Kind)
		}
		if b.DurationMS < 0 {
			c.fail(ev, "negative duration")
		}
		if len(b.Output) > MaxOutputBytes || len(b.Diff) > MaxOutputBytes {
			c.fail(ev, "output or diff over 64 KiB")
		}
		c.replay(ev, b)
	case *Usage:
		c.usage.Add(*b)
	case *Error:
		if b.Code == "" {
			c.fail(ev, "error without a code")
		}
		if b.Fatal && (b.Code == ErrIdleTimeout || b.Code == ErrHardTimeout) {
			c.timeout = true
		}
		if b.Fatal && b.Code == ErrInterrupted {
			c.interrupt = true
		}
		if b.Fatal && b.Partial == nil {
			c.fail(ev, "fatal error without partial")
		}
	case *Warning:
		if b.Code == "" {
			c.fail(ev, "warning without a code")
		}
	case *Native:
		c.natives++
		if b.Stream != StreamStdout && b.Stream != StreamStderr {
			c.fail(ev, "stream %q", b.Stream)
		}
	case *Result:
		c.result(ev, b)
	}
}

func (c *checker) result(ev Event, r *Result) {
	switch r.Status {
	case ResultSuccess, ResultError, ResultTimeout, ResultCancelled:
	default:
		c.fail(ev, "status %q", r.Status)
	}
	if c.timeout && r.Status != ResultTimeout {
		c.fail(ev, "a watchdog timeout ended the run but status is %q", r.Status)
	}
	if c.interrupt && r.Status != ResultCancelled {
		c.fail(ev, "an interrupt ended the run but status is %q", r.Status)
	}
	if n := ev.Seq - c.natives; r.Stats.Events != n {
		c.fail(ev, "stats.events is %d, the stream has %d events other than native ones", r.Stats.Events, n)
	}
	if r.Stats.ToolCalls != c.toolCalls {
		c.fail(ev, "stats.tool_calls is %d, the stream has %d tool_start", r.Stats.ToolCalls, c.toolCalls)
	}
	if r.Stats.UnparsedLines > r.Stats.NativeLines {
		c.fail(ev, "more unparsed lines than native lines")
	}
	if sum, tot := c.usage.tokens(), r.Usage.tokens(); sum != tot {
		c.fail(ev, "usage %+v is not the sum of the usage events %+v", tot, sum)
	}
	c.turnsResult(ev, r)
}

func (c *checker) end(evs []Event) {
	if len(evs) == 0 {
		c.errs = append(c.errs, errors.New("no events"))
		return
	}
	for id, seq := range c.starts {
		c.errs = append(c.errs, fmt.Errorf("tool call %q (seq %d) never ended", id, seq))
	}
}
