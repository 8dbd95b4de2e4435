package serve

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentharness/harness/logger"
)

// keepAlive is how often an idle event stream gets a comment line, so
// proxies and browsers keep a quiet run's connection open.
const keepAlive = 15 * time.Second

// errDropped ends the stream of a subscriber that fell too far behind.
var errDropped = errors.New("serve: subscriber too slow")

// events serves GET /api/runs/{run}/events: the run's stream from the
// session log after Last-Event-ID (or ?after=N), then live until the
// result, as text/event-stream or, for Accept: application/x-ndjson,
// NDJSON.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	after, err := afterSeq(r)
	if err != nil {
		jsonError(w, http.StatusBadRequest, err.Error())
		return
	}
	id := s.resolve(w, r.PathValue("run"))
	if id == "" {
		return
	}
	// Not a regular file of the store (a FIFO, a link out of it): the
	// log's reader would refuse it after the stream's 200, an empty stream
	// that reads as a run with no events. Opened as that reader opens it,
	// so that both judge the file alike.
	f, err := logger.OpenFile(s.cfg.Dir, id, logger.ExtEvents)
	if err != nil {
		jsonError(w, http.StatusNotFound, "run "+id+" has no event log")
		return
	}
	f.Close()
	ndjson := strings.Contains(r.Header.Get("Accept"), "application/x-ndjson")
	lr := s.liveRun(id)
	// The lines up to after are read and skipped here, not by Follow, so
	// that the end names the run's last seq even when the client asked
	// past it (after=999 of a 3-event run ends with 3, not 999).
	opts := logger.FollowOptions{Poll: s.cfg.Poll}
	if lr != nil {
		opts.Wake = lr.waitChan
		opts.Poll = time.Second
		opts.Ended = lr.ended
	}
	if ndjson {
		w.Header().Set("Content-Type", "application/x-ndjson")
	} else {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	rc := http.NewResponseController(w)
	// The status goes at once: a quiet run's stream may have nothing to
	// send for long (over NDJSON, no keep-alive either), and its client
	// waits for the status to know the stream is open.
	_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	_ = rc.Flush()
	if r.Method == http.MethodHead {
		// No body to write: following the run would hold the connection,
		// and the client's next request on it, until the run's end.
		return
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	var idBuf []byte
	last := after // the client's place: where a reconnect resumes
	var top int64 // the run's last seq: the end's
	lastWrite := s.cfg.Now()
	var caughtUp time.Time // when the reader last had every line on the disk
	flush := func() error {
		if bw.Buffered() == 0 {
			return nil
		}
		_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
		if err := bw.Flush(); err != nil {
			return err
		}
		lastWrite = s.cfg.Now()
		return rc.Flush()
	}
	opts.CaughtUp = func() error {
		caughtUp = s.cfg.Now()
		if !ndjson && bw.Buffered() == 0 && s.cfg.Now().Sub(lastWrite) >= keepAlive {
			bw.WriteString(": keep-alive\n\n")
		}
		return flush()
	}
	ctx := r.Context()
	if lr == nil {
		// No run of this server: nothing ends it when the server closes,
		// so its stream ends then (a reconnect, below).
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		// No goroutine of its own waits for the shutdown: AfterFunc
		// starts one only then.
		defer context.AfterFunc(s.quit, cancel)()
	}
	err = logger.Follow(ctx, s.cfg.Dir, id, opts, func(seq int64, line []byte) error {
		top = max(top, seq)
		if seq >= 0 && seq <= after {
			return nil
		}
		// Only a live run's reader is dropped: one of a finished log costs
		// its fixed buffers alone, and would be told to reconnect for the
		// very lines it is reading.
		if lr != nil && !caughtUp.IsZero() && lr.headSeq()-seq > s.cfg.MaxLag && s.cfg.Now().Sub(caughtUp) > s.cfg.SlowAfter && !lr.ended() {
			return errDropped
		}
		if ndjson {
			bw.Write(line)
			bw.WriteByte('\n')
		} else {
			if seq >= 0 {
				idBuf = strconv.AppendInt(append(idBuf[:0], "id: "...), seq, 10)
				bw.Write(append(idBuf, '\n'))
			}
			writeData(bw, line)
		}
		if seq >= 0 {
			last = seq
		}
		if bw.Available() < 8<<10 {
			return flush()
		}
		return nil
	})
	switch {
	case errors.Is(err, errDropped):
		writeReconnect(bw, ndjson, "slow_client", last)
	case err == nil:
		if !ndjson {
			fmt.Fprintf(bw, "event: end\ndata: {\"last_event_id\":%d}\n\n", top)
		}
	case ctx.Err() != nil && s.closing():
		// Cut by the shutdown, not by its client: told so, it does not
		// take the stream's end for its run's.
		writeReconnect(bw, ndjson, "shutdown", last)
	default:
		return // the client went away, or the log could not be read mid-stream
	}
	_ = flush()
}

// writeReconnect tells a client its stream ends before its run's, and to
// resume after last. NDJSON has no event names: the notice is a last line
// that is no event (no "type"), else the stream would read as a run that
// ended without a result.
func writeReconnect(bw *bufio.Writer, ndjson bool, reason string, last int64) {
	if ndjson {
		fmt.Fprintf(bw, "{\"reconnect\":{\"reason\":%q,\"last_event_id\":%d}}\n", reason, last)
	} else {
		fmt.Fprintf(bw, "event: reconnect\ndata: {\"reason\":%q,\"last_event_id\":%d}\n\n", reason, last)
	}
}

// writeData writes line as the data of an SSE message. A line is JSON
// with no newline (the log is split at them), so it holds a raw CR only
// where a corrupted log put one; an SSE client takes a CR for the end of
// the field, and what follows for a field of its own. So a CR ends a data
// line and starts the next: the client joins them with "\n", and no byte
// of the log is read as a field name.
func writeData(bw *bufio.Writer, line []byte) {
	bw.WriteString("data: ")
	for {
		i := bytes.IndexByte(line, '\r')
		if i < 0 {
			break
		}
		bw.Write(line[:i])
		bw.WriteString("\ndata: ")
		line = line[i+1:]
	}
	bw.Write(line)
	bw.WriteString("\n\n")
}

// afterSeq reads where a stream resumes: the Last-Event-ID header, else
// ?after=, else 0 (the whole stream). Either must be a seq (an integer ≥ 0).
func afterSeq(r *http.Request) (int64, error) {
	v, from := r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	if v == "" {
		v, from = r.URL.Query().Get("after"), "after"
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s %q is not an event seq (an integer ≥ 0)", from, v)
	}
	return n, nil
}

// native serves GET /api/runs/{run}/native: the agent's own stdout lines,
// for the page's debug view. The log is opened first, so that a missing
// one is the API's JSON 404 (http.ServeFile answers in text) and a FIFO
// is refused rather than blocking the open.
func (s *Server) native(w http.ResponseWriter, r *http.Request) {
	id := s.resolve(w, r.PathValue("run"))
	if id == "" {
		return
	}
	f, err := logger.OpenFile(s.cfg.Dir, id, logger.ExtNative)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, logger.ErrNotRegular) {
		jsonError(w, http.StatusNotFound, "run "+id+" has no native log")
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	jw := &jsonErrors{ResponseWriter: w}
	http.ServeContent(jw, r, "", fi.ModTime(), f)
	jw.done()
}

// jsonErrors answers the errors http.ServeContent writes itself (416 for
// a range past the end, 412 for a failed precondition) as the API's JSON
// errors, rather than in text.
type jsonErrors struct {
	http.ResponseWriter
	status int // ≥ 400 once ServeContent failed
	msg    []byte
}

func (w *jsonErrors) WriteHeader(status int) {
	if status < 400 {
		w.ResponseWriter.WriteHeader(status)
		return
	}
	w.status = status
}

func (w *jsonErrors) Write(p []byte) (int, error) {
	if w.status != 0 {
		w.msg = append(w.msg, p...)
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// done writes the error held back, if any.
func (w *jsonErrors) done() {
	if w.status == 0 {
		return
	}
	msg := strings.TrimSpace(string(w.msg))
	if msg == "" {
		msg = strings.ToLower(http.StatusText(w.status))
	}
	jsonError(w.ResponseWriter, w.status, msg)
}
