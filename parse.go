package harness

import (
	"context"
	"io"
	"time"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// ParseOptions configures Parse. The zero value is usable.
type ParseOptions struct {
	Raw     bool             // emit a native event before the events of each line
	MaxLine int              // line cap; 0 = 16 MiB
	Run     string           // run id; a fresh one when empty
	Now     func() time.Time // clock; time.Now when nil
}

// Parse normalizes a captured native stdout stream of agent read from r,
// as a live run would, and sends each event to sink in order. The agent's
// terminal event decides the result's status; a stream without one ends
// with an error event and status error. Parse returns the result, or an
// error for an unknown agent or a failed read (the events read before a
// read error are still sent, and the stream still ends with a result).
func Parse(ctx context.Context, r io.Reader, agent string, sink func(event.Event), o ParseOptions) (*event.Result, error) {
	a, err := Adapter(agent)
	if err != nil {
		return nil, err
	}
	in := &chunkClock{r: ctxReader{ctx, r}, now: o.Now}
	if in.now == nil {
		in.now = time.Now
	}
	in.at = in.now()
	s := event.NewStream(event.StreamConfig{
		Run: o.Run, Now: in.time, Raw: o.Raw, Sink: sink,
		Start: event.SessionStart{Agent: a.Name()},
	})
	readErr := adapters.Normalize(in, a.NewParser(), s, o.MaxLine)
	if readErr != nil {
		s.Emit(&event.Error{Code: event.ErrParseError, Message: "reading the native stream: " + readErr.Error()})
	}
	return s.Finish(event.Outcome{NoProcess: true}), readErr
}

// ctxReader stops a long parse when ctx is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// chunkClock reads the clock once per read of the native stream rather than
// once per event: the events of one chunk (64 KiB at most) exist within the
// same millisecond or so, and a clock read per event costs more than the
// event's encoding on event-dense streams.
type chunkClock struct {
	r   io.Reader
	now func() time.Time
	at  time.Time
}

func (c *chunkClock) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.at = c.now()
	return n, err
}

func (c *chunkClock) time() time.Time { return c.at }
