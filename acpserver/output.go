package acpserver

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentharness/harness/internal/rpcline"
	"github.com/agentharness/harness/internal/syncio"
)

// writeGrace is how long a write to the output may block once the input
// has ended: a client that closed its end of stdin may still read the
// answers of its interrupted prompts, but one that reads nothing for
// this long is gone.
const writeGrace = 5 * time.Second

// output is the server's output, shared by the SDK (one whole message
// per Write) and input's own answers: each Write reaches W whole, one at
// a time, and once the input has ended (or Serve is stopping: end) a
// write nobody reads within the grace is abandoned, and every later one
// fails at once (syncio.GraceWriter): a run whose events nobody reads
// would otherwise hold Serve forever, writing to a full pipe. The zero
// value (with W) abandons no write until end.
type output struct {
	syncio.GraceWriter

	// calls are the requests handed on to the SDK and not answered yet:
	// the SDK's answers (Write) free their ids, input's own (reply) do not.
	calls rpcline.InFlight
	// unanswered are the requests handed on whose answers are not written
	// (or abandoned) yet: those in calls and those being written.
	unanswered pending
	// own are input's own answers on their way to W: input never waits
	// for W, or it would not see the end of stdin while the client reads
	// nothing (and the grace starts only then).
	own syncio.Queue
}

// maxReplies bounds the bytes of input's own answers waiting for a
// client that does not read them: thousands of answers (each at most an
// id of 4 KiB and a short message).
const maxReplies = 1 << 20

func newOutput(w io.Writer, grace time.Duration) *output {
	o := &output{GraceWriter: syncio.GraceWriter{W: w, Grace: grace}}
	o.own.W, o.own.Max = ownWriter{o}, maxReplies
	return o
}

// Write writes p, one whole message of the SDK's, to W.
func (o *output) Write(p []byte) (int, error) {
	if o.calls.Written(p) {
		defer o.unanswered.add(-1)
	}
	return o.GraceWriter.Write(p)
}

// handOn notes the id of a request input hands on to the SDK, and
// reports false, noting nothing, when a request of that id is in
// progress (rpcline.InFlight.Start).
func (o *output) handOn(id json.RawMessage) bool {
	if !o.calls.Start(id) {
		return false
	}
	o.unanswered.add(1)
	return true
}

// answered frees the id of a request handOn noted that input answered
// itself after all.
func (o *output) answered(id json.RawMessage) {
	o.calls.End(id)
	o.unanswered.add(-1)
}

// drain returns once every request handed on has its answer written, or
// abandoned (end bounds each write then). The SDK writes an answer only
// after the method returned: a prompt's run being over is not its answer
// being written, and a 'harness acp' that returned then exited before
// it was, about 2 times in 6 when stdin closed mid-prompt. input's own
// answers are written (or abandoned) by then too.
func (o *output) drain() {
	o.unanswered.wait()
	o.own.Wait()
}

// end tells o the input has ended.
func (o *output) end() { o.GraceWriter.End() }

// reply queues a JSON-RPC error answer to the request id: input's own,
// which frees no id the SDK holds. Its error is syncio.ErrQueueFull when
// it was dropped.
func (o *output) reply(id json.RawMessage, e *acpsdk.RequestError) error {
	return rpcline.WriteError(&o.own, id, e)
}

// ownWriter writes input's own messages.
type ownWriter struct{ o *output }

func (w ownWriter) Write(p []byte) (int, error) { return w.o.GraceWriter.Write(p) }

// pending is a count that can be waited on to reach zero; unlike a
// sync.WaitGroup, it may rise again while waited on (input hands on
// requests until stdin ends, and Serve may stop before: its context
// ended). The zero value is zero; it is safe for concurrent use.
type pending struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n falls to zero; made by wait
}

func (c *pending) add(d int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += d
	if c.n == 0 && c.zero != nil {
		close(c.zero)
		c.zero = nil
	}
}

// wait returns once the count is zero.
func (c *pending) wait() {
	c.mu.Lock()
	if c.n == 0 {
		c.mu.Unlock()
		return
	}
	if c.zero == nil {
		c.zero = make(chan struct{})
	}
	zero := c.zero
	c.mu.Unlock()
	<-zero
}
