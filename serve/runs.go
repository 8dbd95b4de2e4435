package serve

import (
	"errors"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/tidwall/gjson"

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
	Live          bool           `json:"live,omitempty"` // started by this server and not over
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
}

// resultPreview is how much of the result's text a summary keeps.
const resultPreview = 500

// scan is what has been read of one run's event log so far.
type scan struct {
	offset   int64
	events   int64
	agent    string
	model    string
	cwd      string
	usage    event.Usage
	resUsage *event.Usage
	cost     *float64
	costEst  bool
	status   string
	duration int64
	exit     *int
	result   string
	tools    int
	byKind   map[string]int
	failed   int
	warnings int
	firstTS  int64
	lastTS   int64
}

// summaries reads each run's log once: a later call reads only what was
// appended since.
type summaries struct {
	dir string
	mu  sync.Mutex
	by  map[string]*scan
}

func (ss *summaries) get(id string) scan {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.by == nil {
		ss.by = map[string]*scan{}
	}
	sc := ss.by[id]
	if sc == nil {
		sc = &scan{}
		ss.by[id] = sc
	}
	if sc.status == "" { // after the result, a log does not grow: no need to look
		sc.read(ss.dir, id)
	}
	out := *sc
	out.byKind = make(map[string]int, len(sc.byKind))
	for k, v := range sc.byKind {
		out.byKind[k] = v
	}
	return out
}

// read adds what was appended to the log since the last read.
func (sc *scan) read(dir, id string) {
	t, err := logger.OpenTailAt(dir, id, sc.offset)
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
	sc.offset = t.Offset()
}

func (sc *scan) add(line []byte) {
	f := gjson.GetManyBytes(line, "seq", "type", "ts")
	sc.events = max(sc.events, f[0].Int())
	if ts := f[2].Int(); ts > 0 {
		if sc.firstTS == 0 {
			sc.firstTS = ts
		}
		sc.lastTS = ts
	}
	switch f[1].Str {
	case "session_start":
		g := gjson.GetManyBytes(line, "agent", "model", "cwd")
		sc.agent, sc.model, sc.cwd = g[0].Str, g[1].Str, g[2].Str
	case "usage":
		sc.usage.Add(usageOf(gjson.ParseBytes(line)))
	case "tool_start":
		sc.tools++
		if sc.byKind == nil {
			sc.byKind = map[string]int{}
		}
		sc.byKind[gjson.GetBytes(line, "kind").Str]++
	case "tool_end":
		if st := gjson.GetBytes(line, "status").Str; st != event.StatusOK {
			sc.failed++
		}
	case "warning":
		sc.warnings++
	case "result":
		r := gjson.ParseBytes(line)
		u := usageOf(r.Get("usage"))
		sc.resUsage = &u
		sc.status = r.Get("status").Str
		sc.duration = r.Get("duration_ms").Int()
		if c := r.Get("cost_usd"); c.Exists() {
			v := c.Float()
			sc.cost, sc.costEst = &v, r.Get("cost_estimated").Bool()
		}
		if e := r.Get("exit_code"); e.Exists() {
			v := int(e.Int())
			sc.exit = &v
		}
		sc.result = cut(r.Get("text").Str, resultPreview)
	}
}

func usageOf(r gjson.Result) event.Usage {
	return event.Usage{
		InputTokens: r.Get("input_tokens").Int(), OutputTokens: r.Get("output_tokens").Int(),
		CacheReadTokens: r.Get("cache_read_tokens").Int(), CacheWriteTokens: r.Get("cache_write_tokens").Int(),
		ReasoningTokens: r.Get("reasoning_tokens").Int(), CostUSD: r.Get("cost_usd").Float(),
		CostEstimated: r.Get("cost_estimated").Bool(),
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

// info joins a run's meta and what its log says.
func (s *Server) info(m logger.Meta) RunInfo {
	sc := s.summary.get(m.Run)
	ri := RunInfo{
		Run: m.Run, Agent: first(m.Agent, sc.agent), Model: first(sc.model, m.Model), Cwd: first(m.Cwd, sc.cwd),
		PromptPreview: m.PromptPreview, Status: m.Status, Start: m.Start, End: m.End, Events: sc.events,
		Usage: sc.usage, ToolCalls: sc.tools, ToolsByKind: sc.byKind, ToolsFailed: sc.failed,
		Warnings: sc.warnings, ExitCode: sc.exit, Result: sc.result, HarnessVer: m.HarnessVersion,
	}
	if lr := s.liveRun(m.Run); lr != nil && !lr.ended() {
		ri.Live = true
	}
	if sc.status != "" {
		ri.Status = sc.status // the stream's word is final even before the meta is rewritten
	}
	if ri.Status == "" {
		ri.Status = logger.StatusRunning
	}
	if sc.resUsage != nil {
		ri.Usage = *sc.resUsage
	}
	ri.CostUSD, ri.CostEstimated = sc.cost, sc.costEst
	if ri.CostUSD == nil && ri.Usage.CostUSD != 0 {
		c := ri.Usage.CostUSD
		ri.CostUSD, ri.CostEstimated = &c, ri.Usage.CostEstimated
	}
	switch {
	case sc.duration > 0:
		ri.DurationMS = sc.duration
	case !m.End.IsZero():
		ri.DurationMS = m.End.Sub(m.Start).Milliseconds()
	case ri.Status == logger.StatusRunning:
		ri.DurationMS = s.cfg.Now().Sub(m.Start).Milliseconds()
	case sc.lastTS > 0: // lost: until its last event
		ri.DurationMS = max(sc.lastTS-m.Start.UnixMilli(), 0)
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
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var since time.Time
	if v := q.Get("since"); v != "" {
		t, err := parseSince(v, s.cfg.Now())
		if err != nil {
			jsonError(w, http.StatusBadRequest, err.Error())
			return
		}
		since = t
	}
	limit := 200
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			jsonError(w, http.StatusBadRequest, "limit "+strconv.Quote(v)+" is not a positive integer")
			return
		}
		limit = n
	}
	metas, err := s.index.List()
	if err != nil {
		jsonError(w, http.StatusInternalServerError, err.Error())
		return
	}
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
		ri := s.info(m)
		if status != "" && ri.Status != status {
			continue
		}
		out.Runs = append(out.Runs, ri)
	}
	writeJSON(w, http.StatusOK, out)
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

// runDetail is the body of GET /api/runs/{run}.
type runDetail struct {
	RunInfo
	Argv []string `json:"argv,omitempty"`
}

// getRun serves GET /api/runs/{run}.
func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	id := s.resolve(w, r.PathValue("run"))
	if id == "" {
		return
	}
	m, err := logger.Load(s.cfg.Dir, id)
	if err != nil {
		jsonError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, runDetail{RunInfo: s.info(m), Argv: m.Argv})
}

func nativePath(dir, id string) string { return filepath.Join(dir, id+logger.ExtNative) }
