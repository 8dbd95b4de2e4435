package otlp

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/logger"
)

// The attribute names of the GenAI semantic conventions
// (open-telemetry/semantic-conventions-genai v0.1.0) that harness sets.
const (
	AttrOperation      = "gen_ai.operation.name"
	AttrProvider       = "gen_ai.provider.name"
	AttrAgentName      = "gen_ai.agent.name"
	AttrAgentVersion   = "gen_ai.agent.version"
	AttrRequestModel   = "gen_ai.request.model"
	AttrResponseModel  = "gen_ai.response.model"
	AttrConversationID = "gen_ai.conversation.id"
	AttrInputTokens    = "gen_ai.usage.input_tokens"
	AttrOutputTokens   = "gen_ai.usage.output_tokens"
	AttrCacheRead      = "gen_ai.usage.cache_read.input_tokens"
	AttrCacheCreation  = "gen_ai.usage.cache_creation.input_tokens"
	AttrReasoning      = "gen_ai.usage.reasoning.output_tokens"
	AttrToolName       = "gen_ai.tool.name"
	AttrToolCallID     = "gen_ai.tool.call.id"
	AttrToolType       = "gen_ai.tool.type"
	AttrToolArguments  = "gen_ai.tool.call.arguments"
	AttrToolResult     = "gen_ai.tool.call.result"
	AttrOutputMessages = "gen_ai.output.messages"
	AttrErrorType      = "error.type"
	AttrTokenType      = "gen_ai.token.type"

	OpInvokeAgent = "invoke_agent"
	OpExecuteTool = "execute_tool"
	OpChat        = "chat"
)

// SpanContext is a span's identity in W3C trace context.
type SpanContext struct {
	TraceID TraceID
	SpanID  SpanID
	Sampled bool
}

// IsValid reports whether sc names a span.
func (sc SpanContext) IsValid() bool { return !sc.TraceID.IsZero() && !sc.SpanID.IsZero() }

// Traceparent is sc as a W3C traceparent header value.
func (sc SpanContext) Traceparent() string {
	flags := "00"
	if sc.Sampled {
		flags = "01"
	}
	return "00-" + sc.TraceID.String() + "-" + sc.SpanID.String() + "-" + flags
}

// ParseTraceparent reads a W3C traceparent header value; ok is false for
// anything else (a bad one is ignored, as the spec says: a new trace).
func ParseTraceparent(s string) (sc SpanContext, ok bool) {
	s = strings.TrimSpace(s)
	parts := strings.Split(s, "-")
	if len(parts) < 4 || len(parts[0]) != 2 || parts[0] == "ff" || len(parts[1]) != 32 || len(parts[2]) != 16 || len(parts[3]) != 2 {
		return SpanContext{}, false
	}
	if parts[0] == "00" && len(parts) != 4 {
		return SpanContext{}, false
	}
	var flags [1]byte
	if _, err := hex.Decode(sc.TraceID[:], []byte(parts[1])); err != nil {
		return SpanContext{}, false
	}
	if _, err := hex.Decode(sc.SpanID[:], []byte(parts[2])); err != nil {
		return SpanContext{}, false
	}
	if _, err := hex.Decode(flags[:], []byte(parts[3])); err != nil || strings.ToLower(s) != s {
		return SpanContext{}, false
	}
	sc.Sampled = flags[0]&1 == 1
	return sc, sc.IsValid()
}

// RunInfo is what a trace needs to know of a run before its events.
type RunInfo struct {
	Run      string // harness run id
	Agent    string // canonical id
	Model    string // the model asked for ("" when the agent's default)
	Protocol string
	// Env is the task's --env pairs: their values are secrets, redacted
	// by value from every string the trace carries.
	Env []string
	// Parent is the caller's span (an incoming traceparent): the run's
	// span becomes its child, in its trace. Zero: a trace of its own.
	Parent SpanContext
}

// Recorder turns one run's events into spans: one invoke_agent span for
// the run, an execute_tool child per tool call, a chat child per model
// call the stream reports usage of. Add takes the events in stream order
// (it is an Observer's OnEvent); Finish ends the run's span.
type Recorder struct {
	info    RunInfo
	content bool
	redact  *logger.Redactor // made when first needed
	// emit is given each finished child span; it is the caller's only
	// during the call (the span is reused after).
	emit func(*Span)

	root      Span
	provider  string
	model     string // the agent's model, as the session start named it
	version   string // the agent's, as the session start named it
	sessionID string
	seqFirst  int64
	seqLast   int64
	tools     map[string]*Span
	free      []*Span           // emitted tool spans, for the next calls
	names     map[string]string // "execute_tool NAME" by tool name
	chat      Span              // the model call span being emitted
	chatName  string
	ids       *rand.PCG // the children's span ids
	boundary  int64     // ms: where the next model call starts
	fatal     *event.Error
	warnings  int
}

// newRecorder starts the trace of a run: its root span's ids are known
// from here on (Context), so the agent can be handed its traceparent.
func newRecorder(info RunInfo, content bool, emit func(*Span)) *Recorder {
	r := &Recorder{info: info, content: content, emit: emit, tools: map[string]*Span{}, names: map[string]string{}, chatName: OpChat}
	if info.Model != "" {
		// The GenAI conventions name a chat span by its request model:
		// the one asked for, when the run names one; else the one the
		// agent says it uses.
		r.chatName = OpChat + " " + info.Model
	}
	r.root = Span{Name: OpInvokeAgent + " " + info.Agent, Kind: KindClient}
	if info.Parent.IsValid() {
		r.root.TraceID, r.root.ParentSpanID = info.Parent.TraceID, info.Parent.SpanID
	} else {
		randomID(r.root.TraceID[:])
	}
	randomID(r.root.SpanID[:])
	// The run's child spans take their ids from a PCG seeded from
	// ChaCha8: they need be unique in their trace, not unguessable, and
	// a PCG id costs 45 instructions fewer (callgrind).
	r.ids = rand.NewPCG(rand.Uint64(), rand.Uint64())
	r.provider = Provider(info.Agent, info.Model)
	return r
}

// redactString redacts s as session logs are, and the values of the
// run's --env whatever their names.
func (r *Recorder) redactString(s string) string {
	if r.redact == nil {
		r.redact = logger.DefaultRedactor().WithEnv(r.info.Env)
	}
	return r.redact.RedactString(s)
}

// Context is the run's span, for the agent's TRACEPARENT.
func (r *Recorder) Context() SpanContext {
	return SpanContext{TraceID: r.root.TraceID, SpanID: r.root.SpanID, Sampled: true}
}

func ms(ts int64) Nanos {
	if ts <= 0 {
		return 0
	}
	return Nanos(ts) * 1e6
}

// child makes s a new child span of the run's span, keeping the room of
// its attribute and event slices (s is reused).
func (r *Recorder) child(s *Span, name string, kind int, start int64) {
	*s = Span{TraceID: r.root.TraceID, ParentSpanID: r.root.SpanID, Name: name, Kind: kind, Start: ms(start),
		Attributes: s.Attributes[:0], Events: s.Events[:0]}
	binary.LittleEndian.PutUint64(s.SpanID[:], r.ids.Uint64()|1) // never all zero
}

// toolSpan is a span for a tool call: an emitted one's, or a new one.
func (r *Recorder) toolSpan() *Span {
	if n := len(r.free); n > 0 {
		s := r.free[n-1]
		r.free = r.free[:n-1]
		return s
	}
	return &Span{Attributes: make([]KeyValue, 0, 10)}
}

// idsOf makes the trace's ids those of run: its trace id (unless it has
// a parent's) and its span's from a hash of the run id, its children's in
// the order they start, so that a trace made again of the same log is
// the same trace, which a backend importing it twice keeps once. A live
// run's ids are random and not logged: this is a trace of its own.
func (r *Recorder) idsOf(run string) {
	sum := sha256.Sum256([]byte("harness trace of run " + run))
	r.ids = rand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:16]))
	var trace TraceID
	for i := 0; i < len(trace); i += 8 {
		binary.LittleEndian.PutUint64(trace[i:], r.ids.Uint64()|1) // never all zero
	}
	if !r.info.Parent.IsValid() {
		r.root.TraceID = trace
	}
	binary.LittleEndian.PutUint64(r.root.SpanID[:], r.ids.Uint64()|1)
}

// randomID fills id from the runtime's ChaCha8 generator (math/rand/v2):
// unpredictable enough for trace ids, which are not secrets, and no
// system call per span.
func randomID(id []byte) {
	for len(id) >= 8 {
		binary.LittleEndian.PutUint64(id, rand.Uint64()|1) // never all zero
		id = id[8:]
	}
}

// maxSpanEvents bounds the warnings and errors a span keeps, as the
// OpenTelemetry SDKs' default event count limit does: an agent that
// reports errors without end must not grow a span without bound.
const maxSpanEvents = 128

// addEvent adds e to s; past maxSpanEvents the oldest is dropped and
// counted, so the latest (a fatal error) stay.
func addEvent(s *Span, e SpanEvent) {
	if len(s.Events) >= maxSpanEvents {
		s.Events = append(s.Events[:0], s.Events[1:]...)
		s.DroppedEvents++
	}
	s.Events = append(s.Events, e)
}

// Add records one event.
func (r *Recorder) Add(ev event.Event) {
	if r.seqFirst == 0 || ev.Seq < r.seqFirst {
		r.seqFirst = ev.Seq
	}
	r.seqLast = max(r.seqLast, ev.Seq)
	switch b := ev.Body.(type) {
	case *event.SessionStart:
		r.root.Start = ms(ev.TS)
		r.boundary = ev.TS
		if b.Model != "" {
			r.model = b.Model
			if r.info.Model == "" {
				r.chatName = OpChat + " " + b.Model
			}
			if r.info.Model == "" {
				r.provider = Provider(r.info.Agent, b.Model)
			}
		}
		if b.SessionID != "" {
			r.sessionID = b.SessionID
		}
		if b.AgentVersion != "" {
			r.version = b.AgentVersion
		}
	case *event.ToolStart:
		name, ok := r.names[b.Name]
		if !ok {
			name = OpExecuteTool + " " + b.Name
			r.names[b.Name] = name
		}
		s := r.toolSpan()
		r.child(s, name, KindInternal, ev.TS)
		if b.ParentCallID != "" { // most calls have none: no lookup
			if p := r.tools[b.ParentCallID]; p != nil {
				s.ParentSpanID = p.SpanID // a sub-agent's call, under its task call
			}
		}
		s.Attributes = append(s.Attributes, Str(AttrOperation, OpExecuteTool), Str(AttrToolName, b.Name),
			Str(AttrToolCallID, b.CallID), Str(AttrToolType, "function"), Str("harness.tool.kind", string(b.Kind)))
		if r.content {
			s.Attributes = append(s.Attributes, Str(AttrToolArguments, r.redactString(string(b.Input))))
		}
		if old := r.tools[b.CallID]; old != nil {
			// An id reused while its call is open (a log not written by
			// harness's stream, which drops such a start): the first
			// call gets no end of its own, so it ends here, as the
			// stream closes one.
			r.endSynthetic(old, ms(ev.TS))
		}
		r.tools[b.CallID] = s
	case *event.ToolEnd:
		s := r.tools[b.CallID]
		if s == nil {
			return
		}
		delete(r.tools, b.CallID)
		s.End = ms(ev.TS)
		s.Attributes = append(s.Attributes, Str("harness.tool.status", b.Status))
		if b.ExitCode != nil {
			s.Attributes = append(s.Attributes, Int("harness.tool.exit_code", int64(*b.ExitCode)))
		}
		if b.Synthetic {
			s.Attributes = append(s.Attributes, Bool("harness.tool.synthetic", true))
		}
		if b.Status != event.StatusOK {
			s.Attributes = append(s.Attributes, Str(AttrErrorType, b.Status))
			s.Status = SpanStatus{Code: StatusError, Message: b.Status}
		}
		if r.content {
			if b.Output != "" {
				s.Attributes = append(s.Attributes, Str(AttrToolResult, r.redactString(b.Output)))
			}
			if b.Diff != "" {
				s.Attributes = append(s.Attributes, Str("harness.tool.diff", r.redactString(b.Diff)))
			}
		}
		r.boundary = max(r.boundary, ev.TS)
		r.emit(s)
		r.free = append(r.free, s)
	case *event.Usage:
		s := &r.chat
		r.child(s, r.chatName, KindClient, r.boundary)
		s.End = ms(ev.TS)
		s.Attributes = append(s.Attributes, Str(AttrOperation, OpChat), Str(AttrProvider, r.provider))
		s.Attributes = r.appendModelAttrs(s.Attributes)
		s.Attributes = appendUsageAttrs(s.Attributes, b)
		if b.CostUSD != 0 {
			s.Attributes = append(s.Attributes, Float("harness.cost_usd", b.CostUSD))
		}
		r.boundary = max(r.boundary, ev.TS)
		r.emit(s)
	case *event.Warning:
		r.warnings++
		attrs := []KeyValue{Str("harness.warning.code", b.Code), Str("harness.warning.message", r.redactString(b.Message))}
		for _, kv := range []struct {
			k string
			v int64
		}{{"harness.warning.idle_ms", b.IdleMS}, {"harness.warning.abort_in_ms", b.AbortInMS},
			{"harness.warning.elapsed_ms", b.ElapsedMS}, {"harness.warning.budget_ms", b.BudgetMS}} {
			if kv.v != 0 {
				attrs = append(attrs, Int(kv.k, kv.v))
			}
		}
		on := &r.root
		if s := r.tools[b.CallID]; b.CallID != "" && s != nil {
			on = s // a stalled tool: on its own span
		}
		addEvent(on, SpanEvent{Time: ms(ev.TS), Name: "harness.warning", Attributes: attrs})
	case *event.Error:
		attrs := []KeyValue{Str("harness.error.code", b.Code), Str("harness.error.message", r.redactString(b.Message)),
			Bool("harness.error.fatal", b.Fatal)}
		if b.Class != "" {
			attrs = append(attrs, Str("harness.error.class", b.Class))
		}
		if b.Status != 0 {
			attrs = append(attrs, Int("http.response.status_code", int64(b.Status)))
		}
		if b.Signal != "" {
			attrs = append(attrs, Str("harness.error.signal", b.Signal))
		}
		if b.Fatal {
			r.fatal = b
			if b.Partial != nil {
				attrs = append(attrs, Int("harness.error.events", b.Partial.Events),
					Int("harness.error.last_activity_ms_ago", b.Partial.LastActivityMSAgo))
			}
		}
		addEvent(&r.root, SpanEvent{Time: ms(ev.TS), Name: "harness.error", Attributes: attrs})
	case *event.Result:
		r.finish(ev.TS, b)
	}
}

func (r *Recorder) appendModelAttrs(kv []KeyValue) []KeyValue {
	if r.info.Model != "" {
		kv = append(kv, Str(AttrRequestModel, r.info.Model))
	}
	if r.model != "" {
		kv = append(kv, Str(AttrResponseModel, r.model))
	}
	return kv
}

// usageAttrs are u in the conventions' meanings: input_tokens counts
// every input token, the cached ones included (harness's input_tokens
// leaves them out), and reasoning is a part of output.
func appendUsageAttrs(kv []KeyValue, u *event.Usage) []KeyValue {
	kv = append(kv, Int(AttrInputTokens, InputTokens(*u)), Int(AttrOutputTokens, u.OutputTokens))
	if u.CacheReadTokens != 0 {
		kv = append(kv, Int(AttrCacheRead, u.CacheReadTokens))
	}
	if u.CacheWriteTokens != 0 {
		kv = append(kv, Int(AttrCacheCreation, u.CacheWriteTokens))
	}
	if u.ReasoningTokens != 0 {
		kv = append(kv, Int(AttrReasoning, u.ReasoningTokens))
	}
	return kv
}

// InputTokens is gen_ai.usage.input_tokens of u: all input, cache read
// and cache written included.
func InputTokens(u event.Usage) int64 { return u.AllInput() }

// endSynthetic ends an open call's span at end, as the stream ends a
// call it closes itself (cancelled, synthetic), and emits it.
func (r *Recorder) endSynthetic(t *Span, end Nanos) {
	t.End = end
	t.Attributes = append(t.Attributes, Str("harness.tool.status", event.StatusCancelled), Bool("harness.tool.synthetic", true),
		Str(AttrErrorType, event.StatusCancelled))
	t.Status = SpanStatus{Code: StatusError, Message: event.StatusCancelled}
	r.emit(t)
	r.free = append(r.free, t)
}

// finish ends the run's span at the result. A second result (a log not
// written by harness's stream) ends it again, in its stead: the span is
// the last result's, as the ATIF export and event.Tally read it.
func (r *Recorder) finish(ts int64, res *event.Result) {
	s := &r.root
	s.End = ms(ts)
	s.Status = SpanStatus{}
	// The stream closes every call first; this is a safety net, for a log
	// cut short (TraceOf). Its calls end as the stream's closing would
	// (cancelled, synthetic), in the order they started: a map's order
	// made two exports of one log differ.
	open := slices.SortedFunc(maps.Keys(r.tools), func(a, b string) int {
		return cmp.Or(cmp.Compare(r.tools[a].Start, r.tools[b].Start), strings.Compare(a, b))
	})
	for _, id := range open {
		r.endSynthetic(r.tools[id], s.End)
		delete(r.tools, id)
	}
	if s.Start == 0 || s.Start > s.End {
		s.Start = s.End
	}
	sessionID := res.SessionID
	if sessionID == "" {
		sessionID = r.sessionID
	}
	attrs := []KeyValue{Str(AttrOperation, OpInvokeAgent), Str(AttrProvider, r.provider), Str(AttrAgentName, r.info.Agent)}
	if r.version != "" {
		attrs = append(attrs, Str(AttrAgentVersion, r.version))
	}
	attrs = r.appendModelAttrs(attrs)
	if sessionID != "" {
		attrs = append(attrs, Str(AttrConversationID, sessionID))
	}
	attrs = appendUsageAttrs(attrs, &res.Usage)
	attrs = append(attrs, Str("harness.run.id", r.info.Run), Int("harness.seq.first", r.seqFirst), Int("harness.seq.last", r.seqLast),
		Str("harness.result.status", res.Status), Int("harness.tool_calls", res.Stats.ToolCalls))
	if r.info.Protocol != "" {
		attrs = append(attrs, Str("harness.protocol", r.info.Protocol))
	}
	if res.CostUSD != nil {
		attrs = append(attrs, Float("harness.cost_usd", *res.CostUSD))
		if res.CostEstimated {
			attrs = append(attrs, Bool("harness.cost_estimated", true))
		}
	}
	if res.NumTurns > 0 {
		attrs = append(attrs, Int("harness.num_turns", int64(res.NumTurns)))
	}
	if res.ExitCode != nil {
		attrs = append(attrs, Int("harness.exit_code", int64(*res.ExitCode)))
	}
	if res.Signal != "" {
		attrs = append(attrs, Str("harness.signal", res.Signal))
	}
	if et := r.errorType(res); et != "" {
		attrs = append(attrs, Str(AttrErrorType, et))
		msg := res.Status
		if r.fatal != nil {
			msg = capValue(r.redactString(r.fatal.Message))
		}
		s.Status = SpanStatus{Code: StatusError, Message: msg}
	}
	if r.content && res.Text != "" {
		text := r.redactString(res.Text)
		out := outputMessages(text)
		if over := len(out) - maxValueBytes; over > 0 {
			// The answer is cut, not its JSON, which Str would cut
			// into a string that is no JSON. A byte less of the text is
			// at least a byte less of the JSON.
			head, _ := event.Cut(text, len(text)-over)
			out = outputMessages(head)
		}
		attrs = append(attrs, Str(AttrOutputMessages, out))
	}
	s.Attributes = attrs
}

// outputMessages is gen_ai.output.messages of the final answer text.
func outputMessages(text string) string {
	out, _ := json.Marshal([]map[string]any{{"role": "assistant", "finish_reason": "stop",
		"parts": []map[string]string{{"type": "text", "content": text}}}})
	return string(out)
}

// errorType is the run's error.type: the class of its fatal error, else
// that error's code, else the result's status; "" for a success.
func (r *Recorder) errorType(res *event.Result) string {
	if res.Status == event.ResultSuccess {
		return ""
	}
	if r.fatal != nil {
		if r.fatal.Class != "" {
			return r.fatal.Class
		}
		return r.fatal.Code
	}
	return res.Status
}

// Root returns the run's span; it is whole once the result was added.
func (r *Recorder) Root() Span { return r.root }

// Provider is gen_ai.provider.name for an agent and model: the
// conventions' name of the vendor whose models the agent calls, from the
// model id's vendor prefix where it has one (OpenCode's
// "anthropic/claude-…").
func Provider(agent, model string) string {
	if vendor, _, ok := strings.Cut(model, "/"); ok {
		switch strings.ToLower(vendor) {
		case "anthropic":
			return "anthropic"
		case "openai":
			return "openai"
		case "google", "gemini":
			return "gcp.gemini"
		case "vertex", "vertex_ai", "google-vertex":
			return "gcp.vertex_ai"
		case "bedrock", "amazon-bedrock":
			return "aws.bedrock"
		case "mistral":
			return "mistral_ai"
		case "xai":
			return "x_ai"
		case "deepseek", "groq":
			return strings.ToLower(vendor)
		}
	}
	switch agent {
	case "claude":
		return "anthropic"
	case "codex":
		return "openai"
	case "gemini":
		return "gcp.gemini"
	}
	if agent == "" {
		return "_OTHER"
	}
	return agent // cursor, opencode: the agent's own service
}

// TraceOf is the whole trace of a finished run's events (a session log):
// what a live export would have sent, in one request. A stream cut short
// (a run still going, or lost) is ended at its last event, with status,
// and the usage and cost its usage events add up to (a result's usage
// is that sum). Its ids come from info.Run (idsOf): the same log gives
// the same trace.
func TraceOf(info RunInfo, content bool, evs []event.Event, resource []KeyValue, version, status string) Traces {
	var spans []Span
	r := newRecorder(info, content, func(s *Span) {
		c := *s // s is reused: its slices too
		c.Attributes, c.Events = slices.Clone(s.Attributes), slices.Clone(s.Events)
		spans = append(spans, c)
	})
	r.idsOf(info.Run)
	var last event.Event
	var tally event.Tally // what a result would have said: its usage, its calls
	for _, ev := range evs {
		r.Add(ev)
		tally.Add(ev)
		last = ev
	}
	if r.root.End == 0 && len(evs) > 0 {
		sum := tally.Usage
		res := &event.Result{Status: status, Usage: sum, CostEstimated: sum.CostEstimated,
			Stats: event.Stats{ToolCalls: int64(tally.ToolCalls)}}
		if sum.CostUSD != 0 {
			res.CostUSD = &sum.CostUSD
		}
		r.Add(event.Event{Seq: last.Seq, TS: last.TS, Body: res})
	}
	if r.root.End != 0 {
		spans = append(spans, r.root)
	}
	return Traces{Resource: resource, Scope: Scope{Name: "harness", Version: version}, Spans: spans}
}
