package acpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentharness/harness/internal/rpcline"
)

// cancelRequest is the notification that cancels a request in progress
// (ACP's $/cancel_request, the SDK's to take).
const cancelRequest = "$/cancel_request"

// maxLine is the longest message 'harness acp' reads. The ACP SDK ends
// its connection at a line over 10 MiB (its scanner's cap), which made
// harness exit 0 without an answer; no such line reaches it.
const maxLine = 8 << 20

// input is the server's input as the ACP SDK reads it: line by line,
// each line looked at before it is handed on.
//
//   - A line that is not one JSON-RPC 2.0 message (rpcline.Check) is
//     answered, not handed on: Parse error (-32700) when it is not JSON,
//     else Invalid request (-32600), to the id of a request (each of a
//     batch's), null otherwise. The SDK logged it to stderr and answered
//     nothing, or served a request with an id it could not answer. A
//     request whose id is null is one: the SDK took it for a
//     notification, and answered nothing.
//   - input's own answers are queued (output.own): it never waits for the
//     output, so it sees the end of stdin even when the client no longer
//     reads, and Serve's grace starts.
//   - A line over maxLine is not handed on (it is read through, never
//     held): a request gets a JSON-RPC error (Invalid request) with its id,
//     anything else a warning to Options.Logger.
//   - Notifications are taken here, never handed on: session/cancel is
//     the one ACP method of them an agent takes, and the SDK holds
//     notifications in a queue of 1024 that ends the connection when full
//     (a burst of session/cancel did). Others are dropped (an unknown
//     extension's, whose name starts with "_", without a word, as ACP
//     says), but for JSON-RPC's $/cancel_request: the SDK takes it as it
//     reads it, never queued, and ends the context of the request it
//     names, which interrupts a prompt's run as session/cancel does.
//   - A session/prompt for a session whose prompt is still running is
//     refused here (Invalid request): the SDK would cancel the running
//     prompt before asking harness, and that turn is left untouched.
//   - A session/prompt without an id is dropped, with a warning (one with
//     a null id is answered Invalid request, above).
//
// Nothing is read until gate is closed: the SDK starts reading at once,
// and the server's connection is set after. Read is called by the SDK's
// one reading goroutine.
type input struct {
	lines *rpcline.Reader
	gate  chan struct{}
	out   *output
	srv   *server
	log   *slog.Logger

	rest []byte // what the SDK has not read yet of the line handed on
	err  error  // the error that ended stdin, returned once rest is read
}

func newInput(r io.Reader, out *output, srv *server, log *slog.Logger) *input {
	return &input{lines: rpcline.NewReader(r, maxLine), gate: make(chan struct{}), out: out, srv: srv, log: log}
}

func (in *input) Read(p []byte) (int, error) {
	<-in.gate
	for len(in.rest) == 0 {
		if in.err != nil {
			return 0, in.err
		}
		in.next()
	}
	n := copy(p, in.rest)
	in.rest = in.rest[n:]
	return n, nil
}

// next reads one line and hands it on, answers it, takes it or drops it.
func (in *input) next() {
	line, over, err := in.lines.Next()
	in.err = err // EOF after a last line without its newline
	if over != nil {
		in.oversize(over)
		return
	}
	m, bad := rpcline.Check(line)
	switch {
	case bad != nil:
		in.invalid(bad)
	case m == nil: // a blank line
	case m.Notification() && m.Method == cancelRequest:
		in.rest = m.Line // the SDK's, see input
	case m.Notification():
		in.notify(m)
	case m.Method != "" && !in.out.handOn(m.ID):
		// The SDK would run it beside the first and answer both with the
		// one id.
		in.reply(m.ID, acpsdk.NewInvalidRequest(map[string]string{"id": "already in use by a request in progress"}))
	case m.Method == acpsdk.AgentMethodSessionPrompt && in.busy(m):
		in.out.answered(m.ID) // answered here
	default:
		in.rest = m.Line
	}
}

// reply answers the request id (nil: null) with the error e; see
// output.reply.
func (in *input) reply(id json.RawMessage, e *acpsdk.RequestError) {
	if err := in.out.reply(id, e); err != nil {
		in.log.Warn("acp: dropped an error answer: the client reads none of the output", "id", string(id), "error", err)
	}
}

// invalid answers a line that is not one JSON-RPC message.
func (in *input) invalid(bad *rpcline.Invalid) {
	data := map[string]string{"error": bad.Reason}
	e := acpsdk.NewInvalidRequest(data)
	if bad.Code == rpcline.CodeParseError {
		e = acpsdk.NewParseError(data)
	}
	if len(bad.IDs) == 0 {
		in.reply(nil, e)
	}
	for _, id := range bad.IDs {
		in.reply(id, e)
	}
}

// oversize answers a line over maxLine: a request gets an error, with
// its id when that could be read (null otherwise, as JSON-RPC says).
func (in *input) oversize(o *rpcline.Oversize) {
	msg := fmt.Sprintf("the message is %d bytes; harness acp reads messages of up to %d bytes", o.Size, maxLine)
	if !o.Request {
		in.log.Warn("acp: dropped an oversize message that is not a request", "bytes", o.Size, "method", o.Method)
		return
	}
	in.reply(o.ID, acpsdk.NewInvalidRequest(map[string]string{"error": msg}))
}

// notify takes a notification (see input).
func (in *input) notify(m *rpcline.Message) {
	switch {
	case m.Method == acpsdk.AgentMethodSessionCancel:
		var p acpsdk.CancelNotification
		if json.Unmarshal(m.Params, &p) != nil || p.Validate() != nil {
			in.log.Warn("acp: dropped a session/cancel without a sessionId")
			return
		}
		_ = in.srv.Cancel(context.Background(), p)
	case m.Method == acpsdk.AgentMethodSessionPrompt:
		// Without an id the SDK takes it for a notification and runs
		// the prompt on its one notification goroutine: a run nobody
		// can answer that holds up every session/cancel behind it, to
		// its budget. Dropped: a notification has no answer.
		in.log.Warn("acp: dropped a session/prompt without an id (a prompt is a request)")
	case !strings.HasPrefix(m.Method, "_"):
		in.log.Warn("acp: dropped a notification harness acp does not take", "method", m.Method)
	}
}

// busy reports whether m, a session/prompt request, is for a session
// whose prompt is still running, and answers it; otherwise a valid
// prompt claims its session (server.claim) until Prompt returns.
func (in *input) busy(m *rpcline.Message) bool {
	// As the SDK reads it: a prompt it refuses itself never reaches
	// Prompt, so it claims nothing.
	var p acpsdk.PromptRequest
	if json.Unmarshal(m.Params, &p) != nil || p.Validate() != nil || in.srv.claim(p.SessionId) {
		return false
	}
	in.reply(m.ID, acpsdk.NewInvalidRequest(map[string]string{
		"sessionId": "a prompt is already running in this session: wait for its answer (or send session/cancel, then wait)"}))
	return true
}
