package harness

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// SessionRecord is what a live session's recorded stream knows that the
// agent's native lines do not: the prompts the harness wrote to the agent,
// how each turn ended where the harness decided it (an interrupt, a turn
// out of time, a turn the session's end closed), whether the caller
// answered permission requests and how, and how the session ended. With it, Parse
// rebuilds the session's turns from its native lines
// (ParseOptions.Session). The record of a one-prompt run's stream has no
// Turns: Parse then takes from it how the run ended (Status, End).
type SessionRecord struct {
	Turns  []RecordedTurn
	Ask    bool   // the session asked its caller (permission_request events)
	Status string // the session's result status
	Cwd    string // the agent's directory (session_start), which paths and diffs are relative to
	Model  string // the session's model (session_start)
	// AskDeadlineMS is how long the session's permission requests waited
	// for an answer (their deadline_ms), 0 when it made none.
	AskDeadlineMS int64
	// Refused says, for each of the session's permission requests in
	// order, whether it was refused (its call's tool_end is denied: the
	// caller's answer, or its deadline's).
	Refused []bool
	// End is the error harness itself ended the stream with, after the
	// agent's last line (a watchdog, an interrupt, the agent's exit
	// status, a turn the agent gave up unasked: Run.Wait's), nil when it
	// ended none: the agent's lines do not say it. A reparse ends with
	// it again, where the recorded stream had it: a run's after the
	// agent's last line; a session's there too, before the turn_end the
	// session's end closed its turn with (if any) and the result.
	End *event.Error
	// Live says that the record is a live session's, not a one-prompt
	// run's, also when it has no turns (a session sent no prompt):
	// ReadSessionRecord sets it when the stream holds a turn or a
	// permission request, which only a live session's has; the caller
	// sets it where it knows otherwise (the log's metadata).
	Live bool
}

// RecordedTurn is one turn of a SessionRecord: its turn_start's prompt
// (and whether the stream cut it), whether the agent began it by itself
// (origin agent: no prompt was sent for it), and its turn_end's status
// and synthetic flag.
type RecordedTurn struct {
	Prompt          string
	PromptTruncated bool
	Agent           bool
	Status          string
	Synthetic       bool
}

// ReadSessionRecord reads the SessionRecord of a recorded stream (a
// session log's <run>.ndjson); for the stream of a one-prompt run, a
// record without Turns (nil when the stream holds no event). A stream
// cut or damaged partway (the harness died writing it) gives the record
// of the events before the damage: the turns after it are not rebuilt.
// The error is the reader's only.
func ReadSessionRecord(r io.Reader) (*SessionRecord, error) {
	rec := &SessionRecord{}
	asked := map[string]int{} // a call's permission request, by the call's id in the stream
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4*event.MaxLineBytes)
	n := 0
	for sc.Scan() {
		ev, err := event.Decode(sc.Bytes())
		if errors.Is(err, event.ErrUnknownType) {
			continue // a later harness's event type, which a reader may ignore (docs/events.md)
		}
		if err != nil {
			break // the damage: what follows is not the session's record
		}
		n++
		rec.add(ev.Body, asked)
	}
	if err := sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) { // a line over the cap is damage too
		return nil, fmt.Errorf("reading the recorded stream: %w", err)
	}
	if n == 0 {
		return nil, nil
	}
	return rec, nil
}

// add takes what the record keeps of one recorded event; asked is the
// index in Refused of each call's last permission request.
func (rec *SessionRecord) add(b event.Body, asked map[string]int) {
	switch b := b.(type) {
	case *event.SessionStart:
		rec.Cwd, rec.Model = b.Cwd, b.Model
	case *event.TurnStart:
		rec.Live = true
		rec.End = nil // an error before a turn did not end the session
		rec.Turns = append(rec.Turns, RecordedTurn{Prompt: b.Prompt, PromptTruncated: b.PromptTruncated, Agent: b.Origin == event.OriginAgent})
	case *event.TurnEnd:
		if n := len(rec.Turns); n > 0 {
			rec.Turns[n-1].Status, rec.Turns[n-1].Synthetic = b.Status, b.Synthetic
		}
		if !b.Synthetic {
			// The agent's end of a turn: an error before it (a turn
			// given up, endTurnAs's) was the turn's, not the session's
			// end, which comes after the agent's last line, before the
			// turn_end the session's end made (synthetic), if any.
			rec.End = nil
		}
	case *event.PermissionRequest:
		rec.Live = true
		rec.Ask = true
		rec.AskDeadlineMS = cmp.Or(rec.AskDeadlineMS, b.DeadlineMS)
		asked[b.CallID] = len(rec.Refused)
		rec.Refused = append(rec.Refused, false)
	case *event.ToolEnd:
		if i, ok := asked[b.CallID]; ok {
			rec.Refused[i] = b.Status == event.StatusDenied
			delete(asked, b.CallID)
		}
	case *event.Error:
		// Run.Wait's error comes after every other error of the stream:
		// a later one is not the harness's end.
		rec.End = nil
		if harnessEnd(b) {
			end := *b
			if b.Partial != nil {
				// What only the process knew is kept; the events before
				// it are the reparse's own (the Stream counts them).
				p := *b.Partial
				p.Events, p.LastEvents = 0, nil
				end.Partial = &p
			}
			rec.End = &end
		}
	case *event.Result:
		rec.Status = b.Status
	}
}

// harnessEnd reports whether e is an error Run.Wait ends a stream with
// (no adapter makes one of these codes; an agent_error only with the
// message of a turn given up, gaveUp's).
func harnessEnd(e *event.Error) bool {
	switch e.Code {
	case event.ErrIdleTimeout, event.ErrHardTimeout, event.ErrInterrupted, event.ErrProcessExit:
		return true
	case event.ErrAgentError:
		return e.Message == gaveUp().Message
	}
	return false
}

// live reports whether rec is a live session's (SessionRecord.Live), not
// a one-prompt run's.
func (rec *SessionRecord) live() bool { return rec != nil && (rec.Live || len(rec.Turns) > 0) }

// outcome sets what out takes from rec: how a session ended (its
// result's status), or a run that harness ended (End): its status, and
// the status the calls still open were closed with, as Run.Wait closed
// them. A run that the agent ended is the agent's lines'.
func (rec *SessionRecord) outcome(out *event.Outcome) {
	switch {
	case rec == nil:
		return
	case rec.live():
		out.Status = rec.Status // how the session ended is the harness's, not in its lines
		return
	case rec.End == nil:
		return
	}
	out.Status = rec.Status
	switch rec.End.Code {
	case event.ErrIdleTimeout, event.ErrHardTimeout:
		out.ToolStatus = event.StatusTimeout
	case event.ErrInterrupted:
		out.ToolStatus = event.StatusCancelled
	}
}

// errOnePrompt: a session record given for a protocol whose parser holds
// one prompt.
var errOnePrompt = errors.New("the protocol holds one prompt a session: its log has no turns")

// replayer plays a live session again over its native lines: the
// protocol's own Conversation, begun on a stdin that goes nowhere with
// the session's task (so it makes the session's requests, with their
// ids, and answers the agent as it did), is sent each recorded prompt
// when the turn before it ended, given the caller's answer to each
// permission request, and asked to cancel a turn the recorded stream
// shows interrupted or out of time; a turn the harness ended itself
// (timeout, or closed when the session ended in it) ends so again. A
// turn the agent began by itself is no prompt's: the Conversation finds
// it in the lines, and the record says how it ended.
type replayer struct {
	conv     adapters.Conversation
	rec      *SessionRecord
	begun    bool // the first prompt was sent
	sent     int  // the record's turns up to the last prompt sent
	next     int  // the record's turn the next turn_start is
	cur      int  // the record's turn in progress (-1: none the record has)
	asked    int  // permission requests made
	open     bool // a turn is in progress
	canceled bool // its cancel was asked
}

// newReplayer begins conv for a replay of rec with task t (the session's
// permissions: ask when its caller answered); the first prompt's turn
// comes with the first line.
func newReplayer(p adapters.Parser, rec *SessionRecord, t adapters.Task, ask bool) (*replayer, error) {
	conv, ok := p.(adapters.Conversation)
	if !ok {
		return nil, errOnePrompt
	}
	replaying(conv)
	conv.Converse(ask || rec.Ask)
	if err := conv.Begin(io.Discard, t); err != nil {
		return nil, err
	}
	r := &replayer{conv: conv, rec: rec, cur: -1}
	return r, nil
}

// replaying readies s, a protocol's client, to be driven over captured
// lines.
func replaying(s adapters.Session) {
	if b, ok := s.(adapters.SetupBounded); ok {
		// A capture is read at once: no setup step can be late.
		b.BoundSetup(100*365*24*time.Hour, nil)
	}
	if r, ok := s.(adapters.Replayed); ok {
		r.Replay()
	}
}

// replayTask is the task a replay begins the protocol's client with: as
// far as the client's requests and answers go, the run's. A session whose
// caller answered (Ask) had the agent's own sandbox off, and asked.
func replayTask(o ParseOptions, cwd string) (t adapters.Task, ask bool) {
	t = adapters.Task{Cwd: cwd, Model: o.Model, Permissions: cmp.Or(o.Permissions, FullAccess), Resume: o.Resume}
	if t.Permissions == Ask {
		t.Permissions, ask = FullAccess, true
	}
	return t, ask
}

// replayParser is the parser Parse maps native lines with, for o and the
// run's cwd: a live session's replayed over its record's turns; a
// read-only one-prompt run's client driven as the run drove it (its
// refusals); else the capture mapped alone, as full-access answered it,
// naming files from cwd where the parser can (dirReplayed) as the run's
// diffs did; and a run whose record says harness ended it ends so again.
func replayParser(p adapters.Parser, o ParseOptions, cwd string) (adapters.Parser, error) {
	t, ask := replayTask(o, cwd)
	if r, ok := p.(resumeReplayed); ok && o.Resume != "" {
		r.ReplayResume(o.Resume) // a client begun below is given it again, with t
	}
	if o.Session.live() {
		if l, ok := p.(legacyReplayed); ok && o.Permissions == "" {
			l.ReplayLegacy()
		}
		return newReplayer(p, o.Session, t, ask)
	}
	begun := false
	if t.Permissions == ReadOnly {
		var err error
		if p, begun, err = replayRun(p, t); err != nil {
			return nil, err
		}
	}
	// A parser begun on the task knows its cwd; one replayRun left as it
	// was (Codex's exec parser, read-only) names files from it as well.
	if d, ok := p.(dirReplayed); ok && cwd != "" && !begun {
		d.ReplayIn(cwd)
	}
	if o.Session != nil && o.Session.End != nil {
		p = &endReplayer{Parser: p, end: *o.Session.End}
	}
	return p, nil
}

// dirReplayed is a parser (acp.Client) whose capture, mapped alone,
// names the files of its diffs from the run's directory, as the live
// run's diffs do (its lines name files by absolute path, or relative to a
// directory they do not say).
type dirReplayed interface{ ReplayIn(cwd string) }

// resumeReplayed is a parser (acp.Client) whose capture of a run that
// continued a session maps otherwise: its opening's answer names none.
type resumeReplayed interface{ ReplayResume(id string) }

// legacyReplayed is a parser (acp.Client) whose session's requests
// changed when harness began to record a log's permissions: a log
// without them (o.Permissions "") is replayed with the requests harness
// made then, so that the agent's answers keep their ids.
type legacyReplayed interface{ ReplayLegacy() }

// endReplayer ends a replayed run with the error harness ended it with
// (SessionRecord.End), after the agent's last line, where Run.Wait
// emitted it.
type endReplayer struct {
	adapters.Parser
	end event.Error
}

// Flush implements adapters.Parser.
func (r *endReplayer) Flush(dst []event.Body) []event.Body {
	end := r.end
	if end.Partial != nil {
		p := *end.Partial
		end.Partial = &p
	}
	return append(r.Parser.Flush(dst), &end)
}

// replayRun drives p, the parser of a one-prompt run, as the run drove it
// where the protocol's client answers the agent from the permissions and
// tells the agent's answers by the ids of its own requests (ACP: an
// adapters.Replayed Session): begun on a stdin that goes nowhere with the
// run's task, it makes the run's requests and refuses what the run
// refused (begun). Any other parser is returned as it is, to map the capture
// alone.
func replayRun(p adapters.Parser, t adapters.Task) (_ adapters.Parser, begun bool, err error) {
	s, ok := p.(adapters.Session)
	if _, replayed := p.(adapters.Replayed); !ok || !replayed {
		return p, false, nil
	}
	replaying(s)
	if err := s.Begin(io.Discard, t); err != nil {
		return nil, false, err
	}
	return s, true, nil
}

// Parse implements adapters.Parser.
func (r *replayer) Parse(dst []event.Body, line []byte) ([]event.Body, bool) {
	n := len(dst)
	if !r.begun {
		r.begun = true
		dst = r.prompt(dst)
	}
	if r.open && !r.canceled && r.stopped() {
		if c, ok := r.conv.(adapters.Canceler); ok {
			r.canceled = c.Cancel()
		}
	}
	dst, known := r.conv.Parse(dst, line)
	return r.turns(dst, n), known
}

// Flush implements adapters.Parser: a turn the harness closed when the
// session ended in it is closed as it was.
func (r *replayer) Flush(dst []event.Body) []event.Body {
	n := len(dst)
	dst = r.turns(r.conv.Flush(dst), n)
	if r.rec.End != nil {
		// The error the session ended with, after the agent's last line
		// and before the turn_end its end made, as Run.Wait emitted it.
		end := *r.rec.End
		if end.Partial != nil {
			p := *end.Partial
			end.Partial = &p
		}
		dst = append(dst, &end)
	}
	if r.open && r.cur >= 0 {
		if t := r.rec.Turns[r.cur]; t.Synthetic {
			dst = append(dst, &event.TurnEnd{Status: t.Status, Synthetic: true})
		}
	}
	return dst
}

// stopped reports whether the harness stopped the turn in progress.
func (r *replayer) stopped() bool {
	if r.cur < 0 {
		return false
	}
	s := r.rec.Turns[r.cur].Status
	return s == event.ResultCancelled || s == event.ResultTimeout
}

// turns follows the turns in dst[n:]: a turn's start says its prompt
// was cut where the recorded one did; a permission request has the
// session's deadline and is answered as it was; a turn out of time ends
// so (the agent ended it cancelled); one the agent ended cancelled
// unasked ends error, after the error that says so, as the session ended
// it (Session.turnEnding); and the next prompt goes once a turn ended.
func (r *replayer) turns(dst []event.Body, n int) []event.Body {
	for {
		ended := false
		for i := n; i < len(dst); i++ {
			switch v := dst[i].(type) {
			case *event.TurnStart:
				r.open, r.canceled, r.cur = true, false, -1
				if r.next < len(r.rec.Turns) {
					r.cur = r.next
					r.next++
				}
				if r.cur >= 0 && r.rec.Turns[r.cur].PromptTruncated {
					v.PromptTruncated = true // the recorded prompt is the one the stream cut
				}
			case *event.PermissionRequest:
				v.DeadlineMS = r.rec.AskDeadlineMS // the session's setting
				if r.asked < len(r.rec.Refused) {
					_, _ = r.conv.Answer(v.CallID, !r.rec.Refused[r.asked])
				}
				r.asked++
			case *event.TurnEnd:
				// What harness did to the turn, as the session did it
				// (endTurnAs): a turn out of time, or one the caller
				// interrupted, whatever the agent answered.
				stopped := ""
				if r.cur >= 0 {
					if st := r.rec.Turns[r.cur].Status; st == event.ResultTimeout || st == event.ResultCancelled {
						stopped = st
					}
				}
				if e := endTurnAs(v, stopped); e != nil {
					dst = slices.Insert(dst, i, event.Body(e))
					i++
				}
				r.open, ended = false, true
			}
		}
		if !ended || r.open {
			return dst
		}
		n = len(dst)
		if dst = r.prompt(dst); len(dst) == n {
			return dst
		}
	}
}

// prompt sends the next recorded prompt, if any: the next turn of the
// record the agent did not begin itself.
func (r *replayer) prompt(dst []event.Body) []event.Body {
	for r.sent < len(r.rec.Turns) && r.rec.Turns[r.sent].Agent {
		r.sent++
	}
	if r.sent >= len(r.rec.Turns) {
		return dst
	}
	r.sent++
	bodies, err := r.conv.Prompt(r.rec.Turns[r.sent-1].Prompt)
	if err != nil {
		return dst
	}
	return append(dst, bodies...)
}
