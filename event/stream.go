package event

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentharness/harness/internal/fewmap"
	"github.com/agentharness/harness/internal/idset"
)

// Limits on what one event may carry, so that a line stays under
// MaxLineBytes whatever the agent printed.
const (
	MaxOutputBytes = 64 << 10  // tool output, diffs
	MaxTextBytes   = 256 << 10 // message, reasoning, result text
	MaxInputBytes  = 256 << 10 // a tool call's input object
	MaxNativeBytes = 256 << 10 // a native line under --raw
	MaxFieldBytes  = 4 << 10   // short fields: names, paths, ids
	// maxTextEscaped bounds a text's JSON encoding (a message's, a
	// reasoning's, a result's or turn_end's text, a prompt, a delta, a
	// native line kept as a string): a control character is 6 bytes
	// escaped (\u0001), so MaxTextBytes of them would be 1.5 MiB. A
	// text is cut where either bound is reached, whichever comes first.
	maxTextEscaped = 3 * MaxTextBytes
	MaxPaths       = 1000
	// maxPathsBytes bounds a call's paths together (escaped at most six
	// times as long): a thousand long paths would pass a line's 1 MiB.
	maxPathsBytes  = 64 << 10
	lastEventsKept = 8
	// UnparsedWarnings is how many unparsed lines get a warning of their
	// own; the rest are counted in one last warning before the result.
	UnparsedWarnings = 10
	// maxPending bounds what waits for the session_start (see pending):
	// past it the session_start is synthesized, so memory stays bounded
	// whatever an agent prints before announcing itself.
	maxPending  = 256
	linePreview = 200 // bytes of an unparsed line shown in its warning
)

// ErrFinished is returned by Emit after Finish.
var ErrFinished = errors.New("event: stream finished")

// StreamConfig configures a Stream. The zero value of each field is usable.
type StreamConfig struct {
	Run   string           // run id; NewRunID() when empty
	Now   func() time.Time // clock; time.Now when nil
	Sink  func(Event)      // receives every event, in order, under the stream's lock
	Start SessionStart     // what the harness knows of the session: agent, cwd, argv, pty, pid
	Raw   bool             // emit a native event for every line given to Line
	// Price prices, when it has no cost, a usage event the stream makes
	// itself (the part of a turn's usage no usage event reported) and a
	// usage given to Emit: what a parser's Flush gives
	// (Claude's call cut off by the end of the output), which no caller
	// sees first. The caller prices the bodies it gives Line, as it
	// prices the agent's own. nil: left unpriced.
	Price func(*Usage)
	// Secrets are values the caller knows for secrets (the keys it handed
	// the agent), which its redactors remove from what it writes. A cut
	// the stream makes (a line's preview, an output over its cap, a
	// summary) never ends inside one: the part left before the cut, which
	// a redactor no longer knows, is cut too (Stream.unsplit).
	Secrets []string
}

// Stream turns the bodies an adapter and a supervisor produce into a valid
// event stream: it stamps v, run, seq and ts; puts one session_start first
// (synthesized when the agent announces none); gives tool calls unique ids
// and pairs every tool_end with a tool_start; holds the agent's own result
// until Finish, which closes open tool calls and writes the one result.
//
// A Stream is safe for concurrent use; the sink sees events one at a time in
// seq order. Bodies must not be changed after they are emitted.
type Stream struct {
	mu  sync.Mutex
	cfg StreamConfig
	now func() time.Time

	seq      int64
	lastTS   int64
	startAt  time.Time
	started  bool
	finished bool

	session SessionStart
	open    fewmap.Map[string, openCall] // by the unique id in the stream
	// openMu guards open's changes (made under mu as well) and
	// OpenCalls' reads: those must not wait for mu, which the sink holds
	// for as long as its consumer blocks (an interrupt reports the calls
	// in flight while stdout is stalled).
	openMu  sync.Mutex
	openSeq int64             // orders open calls, oldest first
	alias   map[string]string // agent's call id -> unique id in the stream
	// callIDs holds a hash of every call id the stream has given a call:
	// a start whose id is in it and not open reuses an ended call's id,
	// and is renamed to one that is not in it either (a set of the ended
	// ids only could rename a reuse to the id of an open call the agent
	// named so itself). Hashes keep the set free of pointers (the GC need
	// not scan it in a run of a million calls); a collision only renames
	// a call that needed no renaming, and never lets an id repeat. The
	// set grows by one hash per call, 11 to 21 bytes (idset): it cannot
	// forget one, as the agent may use that id again. A bounded Bloom
	// filter was tried and dropped, as its false positives renamed ~0.3 %
	// of the calls past a million, differently on every parse (random
	// seed).
	callIDs   idset.Set
	reuses    map[string]int // agent's call id -> the last "#n" suffix given
	toolCalls int64
	usage     Usage
	sawUsage  bool
	agent     *Result // the agent's own terminal report, latest wins
	fatal     bool
	// fatalClass and fatalStatus are the first fatal error's class and
	// http_status: the non-fatal process_exit that follows it details the
	// same failure.
	fatalClass  string
	fatalStatus int
	lastText    string
	lastCut     bool // lastText was cut (its message's Truncated)
	deltaText   strings.Builder
	// answerText, answerCut and answerDelta are lastText, lastCut and
	// deltaText as of the latest report with no text that was not an
	// earlier one again (Result.Again): that text's fallback once
	// messages followed the report.
	answerText  string
	answerCut   bool
	answerDelta string
	nativeN     int64
	// garbageAt is the native line (nativeN) whose garbage usage was last
	// warned of: its per-call event and the terminal report it also fed
	// (Codex's turn.completed) make one warning, not two.
	garbageAt int64
	unparsedN int64
	last      [lastEventsKept]Event
	// normalized counts the events sent that are not native, which are
	// all last keeps: a fatal error's last_events are the normalized
	// ones, with or without --raw.
	normalized int64
	lastAt     time.Time
	// pending holds what a line the agent printed before its own
	// session_start gave rise to without saying anything of the session
	// (native events, unparsed_line warnings), until a session_start goes
	// out: emitting them at once would send a session_start synthesized
	// before the agent's, without its session id and model, and only
	// under --raw.
	pending    []Body
	resultSent *Result
	turn       *openTurn // the live session's turn in progress (turns.go)
	turns      int
	turnText   string // the last turn's answer: a session's result.text
	turnCut    bool   // turnText was cut
	// sessionCost is the agent's last running total of a session's cost
	// (TurnEnd.SessionCostUSD), nil when it reported none: the result's
	// cost_usd, also when it is 0.
	sessionCost *float64
	// tick is the time of the call in progress (Emit, Line, Finish), read
	// once: the events of one native line share it.
	tick time.Time
}

type openCall struct {
	id, name string
	agentID  string // the agent's id of the call, id before a rename
	kind     Kind
	at       time.Time
	start    *ToolStart
	n        int64
}

// OpenCall is a tool call in flight.
type OpenCall struct {
	Start ToolStart // as emitted
	Since time.Time // when the stream saw it start
}

// NewStream returns a Stream. Nothing is emitted until the first body.
func NewStream(cfg StreamConfig) *Stream {
	if cfg.Run == "" {
		cfg.Run = NewRunID()
	}
	s := &Stream{cfg: cfg, now: cfg.Now, alias: map[string]string{}, reuses: map[string]int{}}
	if s.now == nil {
		s.now = time.Now
	}
	s.startAt = s.now()
	s.lastAt = s.startAt
	return s
}

// Run returns the run id.
func (s *Stream) Run() string { return s.cfg.Run }

// Raw reports whether the stream emits native events, which need the lines
// given to Line.
func (s *Stream) Raw() bool { return s.cfg.Raw }

// Emit stamps and sends each body, enforcing the invariants. A Result body
// is the agent's terminal report: it is kept for Finish, not sent. A
// usage without a cost is priced first (StreamConfig.Price).
func (s *Stream) Emit(bodies ...Body) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tick = s.now()
	if s.finished {
		return ErrFinished
	}
	for _, b := range bodies {
		s.price(b)
		s.emit(b)
	}
	return nil
}

// price prices b, a usage given to Emit, when it has no cost
// (StreamConfig.Price). A result's is not: without a cost of its own it
// takes the sum of the priced usage events (Finish), which one estimate
// of its total, for one model, would contradict.
func (s *Stream) price(b Body) {
	if u, ok := b.(*Usage); ok && s.cfg.Price != nil && u.CostUSD == 0 && !u.IsZero() {
		s.cfg.Price(u)
	}
}

// Between runs fn while no event is being emitted: fn never runs beside
// the Sink (a flush of what the Sink wrote, say). fn must not emit.
func (s *Stream) Between(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn()
}

// Line accounts for one native line and emits what was derived from it:
// the native event first when Raw is set, then the bodies. unparsed marks a
// line the adapter did not understand (counted in stats.unparsed_lines).
func (s *Stream) Line(stream string, line []byte, unparsed bool, bodies []Body) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tick = s.now()
	if s.finished {
		return ErrFinished
	}
	unparsed = unparsed && stream == StreamStdout
	if stream == StreamStdout {
		s.nativeN++
		if unparsed {
			s.unparsedN++
		}
	}
	// session_start goes first even when it is derived from this very line.
	if len(bodies) > 0 {
		if ss, ok := bodies[0].(*SessionStart); ok && !s.started {
			s.emit(ss)
			bodies = bodies[1:]
		}
	}
	if s.cfg.Raw {
		s.hold(NativeLine(stream, line))
	}
	if unparsed && s.unparsedN <= UnparsedWarnings {
		w := unparsedWarning(line, s.unparsedN)
		if w.Truncated {
			w.Line = s.unsplit(w.Line)
		}
		s.hold(w)
	}
	for _, b := range bodies {
		s.emit(b)
	}
	return nil
}

// hold emits b, or keeps it until the session_start goes out (pending).
func (s *Stream) hold(b Body) {
	if s.started || len(s.pending) >= maxPending {
		s.emit(b)
		return
	}
	s.pending = append(s.pending, b)
}

// unparsedWarning is the warning of the nth unparsed line.
func unparsedWarning(line []byte, n int64) *Warning {
	w := &Warning{Code: WarnUnparsedLine, Bytes: int64(len(line)), LineGiven: true,
		Message: "a line of the agent's output was not understood"}
	w.Line, w.Truncated = preview(line, linePreview)
	if n == UnparsedWarnings {
		w.Message += "; further unparsed lines are only counted, in one warning at the end"
	}
	return w
}

// preview is Cut(strings.ToValidUTF8(string(line), "\uFFFD"), n) made from
// the line's first bytes only: a line may be as long as the line cap
// (16 MiB), and a preview cut from a string of all of it would copy it
// and then pin the copy as long as the warning lives.
func preview(line []byte, n int) (string, bool) {
	var b []byte
	for i := 0; i < len(line) && len(b) <= n; {
		if r, size := utf8.DecodeRune(line[i:]); r != utf8.RuneError || size > 1 {
			b = append(b, line[i:i+size]...)
			i += size
			continue
		}
		// One replacement for a run of invalid bytes, as ToValidUTF8.
		b = append(b, "\uFFFD"...)
		for i < len(line) {
			if r, size := utf8.DecodeRune(line[i:]); r != utf8.RuneError || size > 1 {
				break
			}
			i++
		}
	}
	return Cut(string(b), n)
}

// NativeLine builds a native event for line: as JSON when it is valid JSON,
// else as a string; cut at MaxNativeBytes.
func NativeLine(stream string, line []byte) *Native {
	n := &Native{Stream: stream}
	if len(line) > MaxNativeBytes {
		line = line[:MaxNativeBytes]
		n.Truncated = true
	}
	if !n.Truncated && ValidJSON(line) && utf8.Valid(line) {
		n.Line = append(json.RawMessage(nil), line...)
		return n
	}
	if len(line) > maxTextEscaped/6 {
		// Kept as a string: escaped, it must stay within a line.
		if k := escapedFit(string(line), maxTextEscaped); k < len(line) {
			line = line[:k]
			n.Truncated = true
		}
	}
	n.Line = AppendString(nil, string(line))
	return n
}

// SetPID records the agent's process id for the session_start, when that
// has not been emitted yet.
func (s *Stream) SetPID(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Start.PID = pid
	if !s.started {
		s.session.PID = pid
	}
}

// Session returns the session_start as known so far (merged with what the
// agent announced).
func (s *Stream) Session() SessionStart {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session
}

// OpenCalls returns the tool calls still open, oldest first. It never
// waits for the sink.
func (s *Stream) OpenCalls() []OpenCall {
	s.openMu.Lock()
	defer s.openMu.Unlock()
	out := make([]OpenCall, 0, s.open.Len())
	for _, c := range s.openCalls() {
		out = append(out, OpenCall{Start: *c.start, Since: c.at})
	}
	return out
}

// openCalls returns the open calls, oldest first.
func (s *Stream) openCalls() []openCall {
	out := s.open.Values()
	slices.SortFunc(out, func(a, b openCall) int { return cmp.Compare(a.n, b.n) })
	return out
}

// AgentStatus is the status of the agent's own terminal report ("" before
// one): the agent's word, before the run's outcome is folded in.
func (s *Stream) AgentStatus() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.agent == nil {
		return ""
	}
	return s.agent.Status
}

// AgentDone reports whether the agent's terminal report has been seen.
func (s *Stream) AgentDone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agent != nil
}

func (s *Stream) emit(b Body) {
	if b == nil {
		return
	}
	switch v := b.(type) {
	case *SessionStart:
		s.mergeSession(v)
		if s.started {
			return
		}
		s.started = true
		ss := s.session
		s.send(&ss)
		s.sendPending()
		return
	case *Result:
		s.keepResult(v)
		return
	}
	if !s.started {
		s.started = true
		s.mergeSession(&SessionStart{})
		ss := s.session
		s.send(&ss)
		s.sendPending()
	}
	switch v := b.(type) {
	case *ToolStart:
		if !s.toolStart(v) {
			return
		}
		if v.ParentCallID == "" {
			// What the agent said before a tool call was commentary, not
			// its final answer.
			s.lastText, s.lastCut = "", false
			s.deltaText.Reset()
		}
	case *ToolEnd:
		s.toolEnd(v)
		return
	case *TurnStart:
		s.turnStart(v)
	case *TurnEnd:
		if !s.turnEnd(v) {
			return
		}
	case *PermissionRequest:
		s.permission(v)
	case *Usage:
		if v.dropNegative() {
			s.warnGarbage()
		}
		s.usage.Add(*v)
		s.sawUsage = true
	case *Message:
		s.parent(&v.ParentCallID)
		s.capText(&v.Text, &v.Truncated)
		if v.Role == RoleAssistant && v.ParentCallID == "" { // a sub-agent's answer is not the run's
			s.lastText, s.lastCut = v.Text, v.Truncated
			s.deltaText.Reset()
		}
	case *Reasoning:
		s.parent(&v.ParentCallID)
		s.capText(&v.Text, &v.Truncated)
	case *TextDelta:
		s.parent(&v.ParentCallID)
		if v.ParentCallID == "" && s.deltaText.Len() < MaxTextBytes {
			s.deltaText.WriteString(v.Text)
		}
		v.Text = sendParts(v.Text, func(part string) { d := *v; d.Text = part; s.send(&d) })
	case *ReasoningDelta:
		s.parent(&v.ParentCallID)
		v.Text = sendParts(v.Text, func(part string) { d := *v; d.Text = part; s.send(&d) })
	case *Error:
		if v.Fatal {
			if !s.fatal {
				s.fatalClass, s.fatalStatus = v.Class, v.Status
			}
			s.fatal = true
			if v.Partial != nil && v.Partial.LastEvents == nil {
				v.Partial.LastEvents = s.lastSummaries()
				v.Partial.Events = s.normalized // native events not counted: --raw changes nothing else
			}
		}
	}
	s.send(b)
}

// sendPending emits what waited for the session_start.
func (s *Stream) sendPending() {
	p := s.pending
	s.pending = nil
	for _, b := range p {
		s.emit(b)
	}
}

func (s *Stream) capText(text *string, truncated *bool) {
	if len(*text) <= maxTextEscaped/6 {
		return // the common case: within both bounds whatever it holds
	}
	if n := textFit(*text); n < len(*text) {
		*text = s.unsplit(strings.Clone((*text)[:n]))
		*truncated = true
	}
}

// textFit is the length of the longest prefix of t, ending on a rune
// boundary, within MaxTextBytes and whose JSON encoding (AppendString's,
// quotes left out) is within maxTextEscaped.
func textFit(t string) int {
	n := len(cutUTF8(t, MaxTextBytes))
	if n <= maxTextEscaped/6 {
		return n
	}
	return escapedFit(t[:n], maxTextEscaped)
}

// escapedFit is the length of the longest prefix of t, ending on a rune
// boundary, whose JSON encoding by AppendString (quotes left out) takes
// at most max bytes. It walks t: call it only when 6*len(t) may exceed
// max.
func escapedFit(t string, max int) int {
	used := 0
	for i := 0; i < len(t); {
		c := t[i]
		w, n := 1, 1
		switch {
		case c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\':
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
			w = 2
		case c < utf8.RuneSelf:
			w = 6
		default:
			r, rs := utf8.DecodeRuneInString(t[i:])
			switch {
			case r == utf8.RuneError && rs == 1:
				w = 6 // \ufffd
			case r == '\u2028' || r == '\u2029':
				w, n = 6, rs
			default:
				w, n = rs, rs
			}
		}
		if used+w > max {
			return i
		}
		used += w
		i += n
	}
	return len(t)
}

// unsplit is cut, a string the stream cut, without the start of a secret
// (StreamConfig.Secrets) that the cut went through: the first bytes of a
// secret, at least 4 of them and not all, that end it. Those are left
// out, not redacted: the stream is exact where it is not cut.
func (s *Stream) unsplit(cut string) string {
	for _, v := range s.cfg.Secrets {
		if len(v) <= minSecretPart {
			continue // no part of it both long enough and not all of it
		}
		// The earliest start in cut's last len(v)-1 bytes from which the
		// rest of cut begins v: one pass, whatever v's length (a PEM key
		// is kilobytes).
		for i := max(len(cut)-len(v)+1, 0); i <= len(cut)-minSecretPart; i++ {
			if cut[i] == v[0] && strings.HasPrefix(v, cut[i:]) {
				cut = cut[:i]
				break
			}
		}
	}
	return cut
}

// minSecretPart is the fewest bytes of a secret that unsplit leaves out:
// fewer say nothing of it.
const minSecretPart = 4

func (s *Stream) mergeSession(v *SessionStart) {
	h := s.cfg.Start
	ss := &s.session
	ss.Agent = cmp.Or(h.Agent, v.Agent, ss.Agent)
	ss.AgentVersion = cmp.Or(v.AgentVersion, ss.AgentVersion, h.AgentVersion)
	ss.Model = cmp.Or(v.Model, ss.Model, h.Model)
	ss.SessionID = cmp.Or(ss.SessionID, v.SessionID, h.SessionID)
	ss.Cwd = cmp.Or(h.Cwd, ss.Cwd, v.Cwd)
	if ss.PID == 0 {
		ss.PID = h.PID
	}
	ss.PTY = h.PTY
	if ss.Argv == nil {
		ss.Argv = h.Argv
	}
	if ss.Argv == nil {
		ss.Argv = []string{}
	}
	if len(v.Tools) > 0 && len(ss.Tools) == 0 {
		ss.Tools = v.Tools
	}
}

func (s *Stream) keepResult(r *Result) {
	cp := *r
	dropped := cp.Usage.dropNegative()
	switch {
	case cp.CostUSD == nil:
	case garbageCost(*cp.CostUSD):
		cp.CostUSD, dropped = Float(0), true
	case *cp.CostUSD == 0:
		cp.CostUSD = Float(0) // -0 too, which would print as "-0"
	}
	if dropped {
		s.warnGarbage()
	}
	if cp.Text == "" && !cp.Again {
		s.answerText, s.answerCut, s.answerDelta = s.lastText, s.lastCut, s.deltaText.String()
	}
	if s.agent != nil {
		// Several terminal reports (one per turn): the latest wins, but
		// keep what an earlier one knew and the later one lacks.
		if cp.SessionID == "" {
			cp.SessionID = s.agent.SessionID
		}
		if cp.Text == "" {
			cp.Text = s.agent.Text
		}
	}
	if cp.SessionID != "" && s.session.SessionID == "" {
		s.session.SessionID = cp.SessionID
	}
	if s.agent == nil {
		// One copy, overwritten by each later report: a copy of each
		// was 3 to 5 % of what a parse of codex or gemini allocates.
		s.agent = new(Result)
	}
	*s.agent = cp
}

func (s *Stream) toolStart(v *ToolStart) bool {
	if v.CallID == "" {
		v.CallID = "call"
	}
	agentID := v.CallID
	if c, ok := s.open.Get(s.aliasOf(agentID)); ok && c.agentID == agentID {
		return false // the same call announced twice
	}
	s.parent(&v.ParentCallID)
	// The maps keep the id, and the open call its start, while the call
	// is open: not views of the agent's line (megabytes), which they
	// would keep alive. The id and the start's strings (short, within
	// their caps) are copied in one allocation rather than one each.
	if len(v.Command) > MaxOutputBytes {
		v.Command = s.unsplit(cutUTF8(v.Command, MaxOutputBytes))
		v.InputTruncated = true
	}
	if len(v.Path) > MaxFieldBytes {
		v.Path = s.unsplit(cutUTF8(v.Path, MaxFieldBytes))
	}
	kept := agentID + v.Name + v.ParentCallID + v.Command + v.Path
	agentID, kept = kept[:len(agentID)], kept[len(agentID):]
	v.Name, kept = kept[:len(v.Name)], kept[len(v.Name):]
	v.ParentCallID, kept = kept[:len(v.ParentCallID)], kept[len(v.ParentCallID):]
	v.Command, v.Path = kept[:len(v.Command)], kept[len(v.Command):]
	id := agentID
	if !s.callIDs.Add(id) {
		// A reused id (the call that had it is not open: it ended): a
		// key of reuses for the rest of the run, which must not keep the
		// start's strings alive with it. A new name is one no call had,
		// not even one the agent named so itself.
		agentID = strings.Clone(agentID)
		for !s.callIDs.Add(id) {
			s.reuses[agentID]++
			id = agentID + "#" + itoa(s.reuses[agentID]+1)
		}
	}
	if id != agentID {
		s.alias[agentID] = id
	} else if len(s.alias) > 0 {
		delete(s.alias, agentID) // a stale rename of an earlier call
	}
	v.CallID = id
	if v.Kind == "" || !v.Kind.Valid() {
		v.Kind = KindOther
	}
	if v.Name == "" {
		v.Name = "unknown"
	}
	in, ok := v.Input, len(v.Input) > 0 && v.Input[0] == '{'
	// Cut before validating: an input over the cap is not kept, whatever
	// it holds, and is not walked more than once.
	over := ok && InputOverCap(in)
	if ok && !over {
		in, ok = compactJSON(in)
	}
	switch {
	case over:
		in = json.RawMessage("{}")
		v.InputTruncated = true
	case !ok:
		in = json.RawMessage("{}")
		v.InputTruncated = v.InputTruncated || JSONTooDeep(v.Input)
	}
	if cap(in) > 2*len(in)+64 {
		// A view of something larger (the agent's line): the open call
		// keeps its start, which must not keep the line alive.
		in = bytes.Clone(in)
	}
	v.Input, v.inputCompact = in, true
	v.Paths = capPaths(v.Paths)
	if len(v.Paths) > 0 {
		paths := make([]string, len(v.Paths))
		for i, p := range v.Paths {
			paths[i] = strings.Clone(p)
		}
		v.Paths = paths
	}
	s.openSeq++
	s.openMu.Lock()
	s.open.Set(v.CallID, openCall{id: v.CallID, agentID: agentID, name: v.Name, kind: v.Kind, at: s.clock(), start: v, n: s.openSeq})
	s.openMu.Unlock()
	s.toolCalls++
	return true
}

// parent names the task call of a sub-agent's event as the stream named
// it: by its rename when the agent reused the call's id.
func (s *Stream) parent(id *string) {
	if *id != "" && len(s.alias) > 0 {
		*id = s.aliasOf(*id)
	}
}

func (s *Stream) aliasOf(agentID string) string {
	if id, ok := s.alias[agentID]; ok {
		return id
	}
	return agentID
}

func (s *Stream) toolEnd(v *ToolEnd) {
	if v.CallID == "" {
		v.CallID = "call"
	}
	agentID := v.CallID
	id := s.aliasOf(agentID)
	c, ok := s.open.Get(id)
	if !ok || c.agentID != agentID {
		// An end with no start: announce the call first, so the pair holds.
		// (An open call of that id that the agent named otherwise is the
		// rename of a reused id: not this one.)
		st := &ToolStart{CallID: v.CallID, Name: v.Name, Kind: v.Kind}
		if s.toolStart(st) {
			s.send(st)
		}
		id = st.CallID
		c, _ = s.open.Get(id)
	}
	v.CallID = id
	if v.Name == "" {
		v.Name = c.name
	}
	if v.Kind == "" || !v.Kind.Valid() {
		v.Kind = c.kind
	}
	if v.Status == "" {
		v.Status = StatusOK
	}
	if v.DurationMS <= 0 && !v.DurationNative {
		v.DurationMS = s.clock().Sub(c.at).Milliseconds()
	}
	v.DurationMS = max(v.DurationMS, 0)
	if len(v.Output) > MaxOutputBytes {
		v.Output = s.unsplit(capUTF8(v.Output, MaxOutputBytes))
		v.OutputTruncated = true
	}
	if len(v.Diff) > MaxOutputBytes {
		v.Diff = s.unsplit(capUTF8(v.Diff, MaxOutputBytes))
		v.DiffTruncated = true
	}
	v.Paths = capPaths(v.Paths)
	s.openMu.Lock()
	s.open.Delete(id)
	s.openMu.Unlock()
	if id != agentID {
		// A later start that reuses the agent's id must get a fresh one.
		delete(s.alias, agentID)
	}
	s.send(v)
}

// warnGarbage warns that the agent reported a garbage count or cost,
// once a native line.
func (s *Stream) warnGarbage() {
	if s.garbageAt == s.nativeN && s.nativeN > 0 {
		return
	}
	s.garbageAt = s.nativeN
	s.emit(garbageUsage())
}

// clock is the time of the call in progress.
func (s *Stream) clock() time.Time {
	if s.tick.IsZero() {
		return s.now()
	}
	return s.tick
}

func (s *Stream) send(b Body) {
	s.seq++
	ts := s.clock().UnixMilli()
	if ts < s.lastTS {
		ts = s.lastTS
	}
	s.lastTS = ts
	ev := Event{V: Version, Type: b.EventType(), Run: s.cfg.Run, Seq: s.seq, TS: ts, Body: b}
	if _, native := b.(*Native); !native {
		s.normalized++
		s.last[s.normalized%lastEventsKept] = ev
	}
	if s.cfg.Sink != nil {
		s.cfg.Sink(ev)
	}
}

func (s *Stream) lastSummaries() []EventSummary {
	out := []EventSummary{}
	for n := s.normalized - lastEventsKept + 1; n <= s.normalized; n++ {
		if n < 1 {
			continue
		}
		ev := s.last[n%lastEventsKept]
		// A summary that cut its text ends at the cut.
		out = append(out, EventSummary{Seq: ev.Seq, Type: ev.Type, Summary: s.unsplit(Summarize(ev.Body))})
	}
	return out
}

// Outcome is how a run ended, as the caller of Finish knows it.
type Outcome struct {
	// Status, when set, is the result status (timeout, cancelled); otherwise
	// it is derived from the agent's report, fatal errors and ExitCode.
	Status string
	// ToolStatus closes calls still open: cancelled when empty.
	ToolStatus string
	ExitCode   *int
	Signal     string
	// NoProcess is set by harness parse: the agent's terminal event alone
	// decides, and its own duration is reported.
	NoProcess bool
	// NativeSpanMS, for a NoProcess run, is the span of the timestamps in
	// the agent's lines, nil when they had none: the duration reported
	// when the agent's terminal event reports none (or never came), in
	// place of how long the parse took.
	NativeSpanMS *int64
	// Lingered: the harness ended the agent after its final event.
	Lingered bool
	// Resumed is the session id the run was asked to resume; when the agent
	// answered under another id, the result reports both.
	Resumed string
}

// CodeNoTerminalEvent is the error code of a stream that ended without the
// agent's terminal event.
const CodeNoTerminalEvent = "no_terminal_event"

// FatalClass is the class and HTTP status of the first fatal error
// emitted ("" and 0 before one).
func (s *Stream) FatalClass() (class string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fatalClass, s.fatalStatus
}

// Fatal reports whether a fatal error has been emitted.
func (s *Stream) Fatal() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fatal
}

// Finish closes open tool calls, emits the result and ends the stream. It
// returns the result; a second call returns the first result again.
func (s *Stream) Finish(o Outcome) *Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tick = s.now()
	if s.finished {
		return s.resultSent
	}
	if !s.started {
		s.emit(&SessionStart{})
	}
	toolStatus := o.ToolStatus
	if toolStatus == "" {
		toolStatus = StatusCancelled
	}
	s.sendPending()
	for _, c := range s.openCalls() {
		s.toolEnd(&ToolEnd{CallID: c.agentID, Name: c.name, Kind: c.kind, Status: toolStatus, Synthetic: true})
	}
	s.closeTurn(o.Status)
	if n := s.unparsedN - UnparsedWarnings; n > 0 {
		s.emit(&Warning{Code: WarnUnparsedLine, Message: itoa(int(n)) + " more unparsed lines, not shown one by one (" +
			itoa(int(s.unparsedN)) + " in all; stats.unparsed_lines counts them)"})
	}
	s.settleUsage()
	status := o.Status
	if status == "" {
		status = s.deriveStatus(o)
	}
	r := s.buildResult(status, o)
	s.finished = true
	s.resultSent = r
	s.send(r)
	return r
}

// settleUsage makes the usage events add up to the totals the agent
// reported (invariant 6 of docs/events.md). Where the totals exceed what
// the events said — a model call whose final count only the totals carry
// — one last usage event gives the difference. Where they fall short in
// any field — a repeated terminal event, numbers that contradict each
// other — no event can be negative, so the sum of the events becomes the
// total and a usage_mismatch warning says so.
func (s *Stream) settleUsage() {
	a := s.agent
	if a == nil || a.Usage.IsZero() {
		return
	}
	total, sum := a.Usage.tokens(), s.usage.tokens()
	d := Usage{InputTokens: total.InputTokens - sum.InputTokens, OutputTokens: total.OutputTokens - sum.OutputTokens,
		CacheReadTokens: total.CacheReadTokens - sum.CacheReadTokens, CacheWriteTokens: total.CacheWriteTokens - sum.CacheWriteTokens,
		ReasoningTokens: total.ReasoningTokens - sum.ReasoningTokens}
	if d.InputTokens < 0 || d.OutputTokens < 0 || d.CacheReadTokens < 0 || d.CacheWriteTokens < 0 || d.ReasoningTokens < 0 {
		s.emit(&Warning{Code: WarnUsageMismatch, Message: "the agent's usage totals are below the sum of its per-call usage; the result reports the sum"})
		cost, est := a.Usage.CostUSD, a.Usage.CostEstimated
		a.Usage = sum
		a.Usage.CostUSD, a.Usage.CostEstimated = cost, est
		return
	}
	if !d.IsZero() {
		s.emit(&d)
	}
}

func (s *Stream) deriveStatus(o Outcome) string {
	if s.agent == nil {
		if !s.fatal {
			msg := "the agent's stream ended without its terminal event"
			if o.ExitCode != nil && *o.ExitCode == 0 {
				msg += " (exit status 0)"
			}
			s.emit(&Error{Code: CodeNoTerminalEvent, Message: msg, Fatal: false,
				Hint: "the agent may have crashed or been cut off; see its stderr and the session log"})
		}
		return ResultError
	}
	switch {
	case s.agent.Status != "" && s.agent.Status != ResultSuccess:
		return ResultError
	case s.fatal:
		return ResultError
	case !o.NoProcess && !o.Lingered && o.ExitCode != nil && *o.ExitCode != 0:
		return ResultError
	case !o.NoProcess && !o.Lingered && o.Signal != "":
		return ResultError
	}
	return ResultSuccess
}

func (s *Stream) buildResult(status string, o Outcome) *Result {
	r := &Result{Status: status, ExitCode: o.ExitCode, Signal: o.Signal, LingeredAfterDone: o.Lingered}
	r.DurationMS = s.clock().Sub(s.startAt).Milliseconds()
	if o.NoProcess && o.NativeSpanMS != nil {
		r.DurationMS = max(*o.NativeSpanMS, 0)
	}
	r.Usage = s.usage
	if a := s.agent; a != nil {
		// An adapter that cut the text to the limit itself says so: the
		// cap below sees a text within it and would not.
		r.Text, r.TextTruncated = a.Text, a.TextTruncated
		r.SessionID = a.SessionID
		r.ResumedSessionID = a.ResumedSessionID
		r.NumTurns = a.NumTurns
		if !a.Usage.IsZero() {
			r.Usage = a.Usage
			if a.Usage.CostUSD == 0 {
				r.Usage.CostUSD = s.usage.CostUSD
				r.Usage.CostEstimated = s.usage.CostEstimated
			}
		}
		if a.CostUSD != nil {
			r.CostUSD = a.CostUSD
			r.Usage.CostUSD = *a.CostUSD
			r.Usage.CostEstimated = false
		}
		if o.NoProcess && (a.DurationMS > 0 || a.DurationNative) {
			r.DurationMS = max(a.DurationMS, 0)
		}
	}
	if r.CostUSD == nil && s.sessionCost != nil && r.Usage.CostUSD == *s.sessionCost {
		r.CostUSD = Float(*s.sessionCost)
	}
	if r.CostUSD == nil && r.Usage.CostUSD > 0 {
		r.CostUSD = Float(r.Usage.CostUSD)
	}
	r.CostEstimated = r.Usage.CostEstimated
	if s.turns > 0 {
		// A live session's answer is its last turn's, even when that
		// turn has none (it was interrupted, or the session ended in it).
		r.Text, r.TextTruncated = s.turnText, s.turnCut
	} else if r.Text == "" {
		// The last complete answer. Deltas count only when the agent
		// finished its turn: in a run cut off (or a turn the agent reports
		// cancelled) they may be a sentence half said, and in a turn it
		// reports failed, its error (claude-agent-acp streams an API error
		// as text before it answers the prompt with it).
		text, cut, delta := s.lastText, s.lastCut, s.deltaText.String()
		if s.agent != nil && s.agent.Again {
			// What followed the answer (a turn the agent began by
			// itself) is not its text.
			text, cut, delta = s.answerText, s.answerCut, s.answerDelta
		}
		r.Text, r.TextTruncated = text, cut
		if r.Text == "" && s.agent != nil && s.agent.Status == ResultSuccess {
			r.Text = delta
		}
	}
	s.capText(&r.Text, &r.TextTruncated)
	if r.SessionID == "" {
		r.SessionID = s.session.SessionID
	}
	if o.Resumed != "" && r.SessionID != "" && r.SessionID != o.Resumed && r.ResumedSessionID == "" {
		r.ResumedSessionID = o.Resumed
	}
	r.Stats = Stats{NativeLines: s.nativeN, UnparsedLines: s.unparsedN,
		Events: s.normalized + 1, ToolCalls: s.toolCalls} // the result included, native events not
	return r
}

// Summarize returns a one-line summary of a body, for partial results and
// interrupt reports.
func Summarize(b Body) string {
	switch v := b.(type) {
	case *SessionStart:
		return v.Agent + " " + v.Model
	case *TextDelta:
		return cutUTF8(v.Text, 80)
	case *ReasoningDelta:
		return cutUTF8(v.Text, 80)
	case *Message:
		return v.Role + ": " + cutUTF8(v.Text, 80)
	case *Reasoning:
		return cutUTF8(v.Text, 80)
	case *ToolStart:
		s := v.Name + " (" + string(v.Kind) + ")"
		if v.Command != "" {
			s += " " + cutUTF8(v.Command, 80)
		} else if v.Path != "" {
			s += " " + v.Path
		}
		return s
	case *ToolEnd:
		return v.Name + " " + v.Status
	case *Usage:
		return "in " + itoa(int(v.InputTokens)) + " out " + itoa(int(v.OutputTokens))
	case *Warning:
		return v.Code + ": " + cutUTF8(v.Message, 80)
	case *Error:
		return v.Code + ": " + cutUTF8(v.Message, 80)
	case *Result:
		return v.Status
	case *Native:
		return v.Stream
	}
	return ""
}

// Cut returns s cut to at most n bytes on a rune boundary, and whether it cut.
func Cut(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	return cutUTF8(s, n), true
}

// capUTF8 is cutUTF8 for a field cut to its cap: a cut string is a copy,
// so that the event (kept while its call is open, and among the last
// events of the stream) does not keep all of s alive.
func capUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.Clone(cutUTF8(s, n))
}

func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func itoa(n int) string { return strconv.Itoa(n) }

// capPaths keeps the first of paths that fit MaxPaths and maxPathsBytes;
// a path past MaxFieldBytes is left out rather than cut (a cut path names
// another file).
func capPaths(paths []string) []string {
	n := 0
	for i, p := range paths {
		n += len(p)
		if i == MaxPaths || n > maxPathsBytes || len(p) > MaxFieldBytes {
			return paths[:i]
		}
	}
	return paths
}

// sendParts sends the leading parts of a delta too long for a line, each
// as long as fits one, and returns the rest, which fits: the parts
// concatenate to the delta, as deltas do.
func sendParts(text string, send func(part string)) string {
	for len(text) > maxTextEscaped/6 {
		n := textFit(text)
		if n == len(text) || n == 0 {
			break
		}
		send(text[:n])
		text = text[n:]
	}
	return text
}
