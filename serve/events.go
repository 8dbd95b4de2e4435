package serve

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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
	if _, err := os.Stat(filepath.Join(s.cfg.Dir, id+logger.ExtEvents)); err != nil {
		jsonError(w, http.StatusNotFound, "run "+id+" has no event log")
		return
	}
	ndjson := strings.Contains(r.Header.Get("Accept"), "application/x-ndjson")
	lr := s.liveRun(id)
	opts := logger.FollowOptions{After: after, Poll: s.cfg.Poll}
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
	bw := bufio.NewWriterSize(w, 64<<10)
	var idBuf []byte
	last := after
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
	err = logger.Follow(r.Context(), s.cfg.Dir, id, opts, func(seq int64, line []byte) error {
		if lr != nil && !caughtUp.IsZero() && lr.headSeq()-seq > s.cfg.MaxLag && s.cfg.Now().Sub(caughtUp) > s.cfg.SlowAfter {
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
			bw.WriteString("data: ")
			bw.Write(line)
			bw.WriteString("\n\n")
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
		if !ndjson {
			fmt.Fprintf(bw, "event: reconnect\ndata: {\"reason\":\"slow_client\",\"last_event_id\":%d}\n\n", last)
		}
	case err == nil:
		if !ndjson {
			fmt.Fprintf(bw, "event: end\ndata: {\"last_event_id\":%d}\n\n", last)
		}
	default:
		return // the client went away, or the log could not be read mid-stream
	}
	_ = flush()
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
// for the page's debug view.
func (s *Server) native(w http.ResponseWriter, r *http.Request) {
	id := s.resolve(w, r.PathValue("run"))
	if id == "" {
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	http.ServeFile(w, r, nativePath(s.cfg.Dir, id))
}
