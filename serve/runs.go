package serve

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/logger"
)

// RunInfo is a run as the API lists it: its meta, and figures read from
// its event log (so a live run's tokens and tools accrue).
type RunInfo struct {
	Run           string         `json:"run"`
	Agent         string         `json:"agent"`
	Model         string         `json:"model,omitempty"`
	Cwd           string         `json:"cwd,omitempty"`
	PromptPreview string         `json:"prompt_preview,omitempty"`
	Status        string         `json:"status"`
	Live          bool           `json:"live,omitempty"`    // started by this server and not over
	Session       bool           `json:"session,omitempty"` // a live session of this server (its commands are open)
	Start         time.Time      `json:"start"`
	End           time.Time      `json:"end,omitzero"`
	DurationMS    int64          `json:"duration_ms"`
	Events        int64          `json:"events"` // the last seq
	Usage         event.Usage    `json:"usage"`
	CostUSD       *float64       `json:"cost_usd,omitempty"`
	CostEstimated bool           `json:"cost_estimated,omitempty"`
	ToolCalls     int            `json:"tool_calls"`
	ToolsByKind   map[string]int `json:"tools_by_kind,omitempty"`
	ToolsFailed   int            `json:"tools_failed,omitempty"`
	Warnings      int            `json:"warnings,omitempty"`
	ExitCode      *int           `json:"exit_code,omitempty"`
	Result        string         `json:"result,omitempty"` // the result's text, cut
	HarnessVer    string         `json:"harness_version,omitempty"`
	// TallyFromResult: the figures were read from the log's first and
	// last lines alone (a finished run whose log is over wholeScanMax):
	// ToolsByKind, ToolsFailed and Warnings were not counted.
	TallyFromResult bool `json:"tally_from_result,omitempty"`
	// MetaError: the run's meta file could not be read as its meta
	// (missing, malformed, not a regular file of the store), so the
	// prompt preview and argv are unknown and the rest is the log's.
	MetaError string `json:"meta_error,omitempty"`
}

// resultPreview is how much of the result's text a summary keeps.
const resultPreview = 500

// scan is what has been read of one run's event log so far.
type scan struct {
	offset int64       // past what was read and judged (logger.TailPos)
	inLong bool        // offset is inside a line too long to read
	size   int64       // the log's size at the last read: unchanged, it holds nothing new
	file   os.FileInfo // the log read, to tell it from one that replaced it
	tally  event.Tally
	result string // the result's text, cut
	ends   bool   // the tally is readEnds's
}

// wholeScanMax is the size up to which a finished run's log is read whole
// for its summary; a longer one is read at its ends (readEnds): the list
// costs the same whatever the size of a finished run's log. Reading 1 MiB
// of events takes ~30 ms of CPU, about what reading the ends may cost
// when their lines are as long as the stream allows (1 MiB each); a 540
// MB log took 13 s and 350 MB of memory.
const wholeScanMax = 1 << 20

// summaries reads each run's log once: a later call reads only what was
// appended since. mu guards the map only; a run's log is read under the
// run's own lock, so a log slow to read holds up no other run's summary.
// A listing forgets the runs no longer in the store (forget).
type summaries struct {
	dir string
	mu  sync.Mutex
	by  map[string]*summary
}

// summary is one run's scan and the lock its reads take.
type summary struct {
	mu sync.Mutex
	sc scan
}

func (ss *summaries) get(id string) scan {
	ss.mu.Lock()
	if ss.by == nil {
		ss.by = map[string]*summary{}
	}
	su := ss.by[id]
	if su == nil {
		su = &summary{}
		ss.by[id] = su
	}
	ss.mu.Unlock()
	su.mu.Lock()
	defer su.mu.Unlock()
	sc := &su.sc
	if !sc.tally.Ended() { // after the result, a log does not grow: no need to look
		sc.read(ss.dir, id)
	}
	out := *sc
	out.tally = sc.tally.Clone()
	return out
}

// forget drops the summaries of the runs not in metas, the store's runs
// as just listed, once there are more summaries than runs (as
// logger.Index forgets its metas): a long-lived server keeps no more
// than about a summary per run in the store, however many were pruned or
// deleted since it started, and a listing of an unchanged store costs no
// more. A read of a forgotten run's log in progress ends on its own
// summary; a later get of that run starts a new one.
func (ss *summaries) forget(metas []logger.Meta) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(ss.by) <= len(metas) {
		return
	}
	listed := make(map[string]bool, len(metas))
	for _, m := range metas {
		listed[m.Run] = true
	}
	for id := range ss.by {
		if !listed[id] {
			delete(ss.by, id)
		}
	}
}

// read adds what was appended to the log since the last read. Each byte
// is read once: an unfinished last line is read again only once the log
// grew, and what was read of a line too long to return not at all. A log
// truncated below what was read, or replaced by another file, is read
// again from its start, as a stream's reader does.
func (sc *scan) read(dir, id string) {
	fi, err := os.Stat(logger.Path(dir, id, logger.ExtEvents))
	if err != nil {
		return
	}
	if sc.file != nil && (!os.SameFile(fi, sc.file) || fi.Size() < max(sc.size, sc.offset)) {
		// Replaced or truncated: what was read is no longer the log's.
		*sc = scan{}
	}
	if fi.Size() == sc.size {
		return
	}
	if sc.offset == 0 && sc.readEnds(dir, id, fi.Size()) {
		sc.file = fi
		return
	}
	t, err := logger.OpenTailPos(dir, id, logger.TailPos{Offset: sc.offset, InLongLine: sc.inLong})
	if err != nil {
		return
	}
	defer t.Close()
	for {
		line, err := t.Next()
		if err != nil {
			break
		}
		sc.add(line)
	}
	p := t.Pos()
	sc.offset, sc.inLong, sc.size, sc.file = p.Offset, p.InLongLine, fi.Size(), fi
}

// readEnds takes the summary of a log over wholeScanMax (its size) whose
// last line is the result (a finished run) from that line and the first
// one (the session_start), reading at most two lines' worth of the log;
// it reports whether it did. The result carries the run's usage, cost,
// status, duration, exit, text, last seq and stats.tool_calls (the
// stream's tool_start count); what only the lines between tell (tools by
// kind, tools failed, warnings) is not counted. A log that is not over,
// or cut before its result, is read whole.
func (sc *scan) readEnds(dir, id string, size int64) bool {
	if size <= wholeScanMax {
		return false
	}
	ends, err := logger.ReadEnds(dir, id, event.MaxLineBytes)
	if err != nil || ends.Last == nil {
		return false
	}
	last, err := event.Decode(ends.Last)
	if err != nil {
		return false
	}
	r, ok := last.Body.(*event.Result)
	if !ok {
		return false
	}
	var t event.Tally
	if first, err := event.Decode(ends.First); err == nil {
		if _, ok := first.Body.(*event.SessionStart); ok {
			t.Add(first)
		}
	}
	t.Add(last)
	t.ToolCalls = int(max(r.Stats.ToolCalls, 0))
	*sc = scan{offset: ends.Size, tally: t, result: cut(r.Text, resultPreview), ends: true}
	return true
}

func (sc *scan) add(line []byte) {
	ev, err := event.Decode(line)
	if err != nil {
		// A line of a future type, or torn: it still counts as an event.
		if seq, _ := logger.LineSeq(line); seq > 0 {
			sc.tally.Add(event.Event{Seq: seq})
		}
		return
	}
	sc.tally.Add(ev)
	// The listing shows no error: a fatal one's partial (its stderr
	// tail, 8 KiB) is not kept for every run of a long-lived server.
	sc.tally.Fatal, sc.tally.LastError = nil, nil
	if r, ok := ev.Body.(*event.Result); ok {
		sc.result = cut(r.Text, resultPreview)
	}
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// info joins a run's meta and what its log says; why is why the meta is
// made up (logger.LoadChecked), nil when it is the meta file's.
func (s *Server) info(m logger.Meta, why *logger.MetaError) RunInfo {
	sc := s.summary.get(m.Run)
	t := &sc.tally
	ri := RunInfo{
		Run: m.Run, Agent: first(m.Agent, t.Agent), Model: first(t.Model, m.Model), Cwd: first(m.Cwd, t.Cwd),
		PromptPreview: m.PromptPreview, Status: m.Status, Start: m.Start, End: m.End, Events: t.Events,
		Usage: t.Usage, ToolCalls: t.ToolCalls, ToolsByKind: t.ToolsByKind, ToolsFailed: t.ToolsFailed,
		Warnings: t.Warnings, ExitCode: t.ExitCode, Result: sc.result, HarnessVer: m.HarnessVersion,
		TallyFromResult: sc.ends,
	}
	if why != nil {
		ri.MetaError = metaProblem(why)
	}
	if lr := s.liveRun(m.Run); lr != nil && !lr.ended() {
		ri.Live = true
		ri.Session = lr.session() != nil
	}
	if t.Status != "" {
		ri.Status = t.Status // the stream's word is final even before the meta is rewritten
	}
	if ri.Status == "" {
		ri.Status = logger.StatusRunning
	}
	ri.CostUSD, ri.CostEstimated = t.Cost()
	switch {
	case t.DurationMS > 0:
		ri.DurationMS = t.DurationMS
	case !m.End.IsZero():
		ri.DurationMS = m.End.Sub(m.Start).Milliseconds()
	case ri.Status == logger.StatusRunning:
		ri.DurationMS = s.cfg.Now().Sub(m.Start).Milliseconds()
	case t.LastTS > 0: // lost: until its last event
		ri.DurationMS = max(t.LastTS-m.Start.UnixMilli(), 0)
	}
	return ri
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// runsPage is the body of GET /api/runs.
type runsPage struct {
	Runs []RunInfo `json:"runs"`
}

// listRuns serves GET /api/runs?agent=&status=&since=&limit=.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var since time.Time
	if v := q.Get("since"); v != "" {
		t, err := parseSince(v, s.cfg.Now())
		if err != nil {
			return withStatus(http.StatusBadRequest, err)
		}
		since = t
	}
	limit := 200
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return httpErrorf(http.StatusBadRequest, "limit %s is not a positive integer", strconv.Quote(v))
		}
		limit = n
	}
	metas, whys, err := s.index.ListChecked()
	if err != nil {
		return err
	}
	s.summary.forget(metas)
	agent, status := q.Get("agent"), q.Get("status")
	out := runsPage{Runs: []RunInfo{}}
	for _, m := range metas {
		if len(out.Runs) == limit {
			break
		}
		if !since.IsZero() && m.Start.Before(since) {
			continue
		}
		if agent != "" && m.Agent != agent {
			continue
		}
		ri := s.info(m, whys[m.Run])
		if status != "" && ri.Status != status {
			continue
		}
		out.Runs = append(out.Runs, ri)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// parseSince reads a point in time: RFC 3339, or a duration before now
// ("2h").
func parseSince(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, errors.New("since " + strconv.Quote(v) + " is neither an RFC 3339 time nor a duration (2h)")
}

// metaProblem says in a word or two why a run's meta is made up: the
// path is the store's, no business of an API client.
func metaProblem(why *logger.MetaError) string {
	switch {
	case errors.Is(why, fs.ErrNotExist):
		return "missing"
	case errors.Is(why, logger.ErrMetaMalformed):
		return "malformed"
	case errors.Is(why, logger.ErrNotRegular):
		return "not a regular file"
	}
	return why.Err.Error()
}

// runDetail is the body of GET /api/runs/{run}.
type runDetail struct {
	RunInfo
	Argv []string `json:"argv,omitempty"`
}

// getRun serves GET /api/runs/{run}.
func (s *Server) getRun(w http.ResponseWriter, r *http.Request) error {
	id, err := s.runID(r.PathValue("run"))
	if err != nil {
		return err
	}
	m, why, err := logger.LoadChecked(s.cfg.Dir, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, runDetail{RunInfo: s.info(m, why), Argv: m.Argv})
	return nil
}
