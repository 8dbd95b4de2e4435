package serve

import (
	"errors"
	"io/fs"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/agentharness/harness/bench"
)

// ReportInfo is one stored bench report, as GET /api/bench lists it.
type ReportInfo struct {
	ID      string    `json:"id"`
	Started time.Time `json:"started"`
	WallMS  int64     `json:"wall_ms"`
	Agents  []string  `json:"agents"`
	Tasks   []string  `json:"tasks,omitempty"`
	Runs    int       `json:"runs"`
}

func infoOf(rep *bench.Report) ReportInfo {
	ri := ReportInfo{ID: rep.ID, Started: rep.Started, WallMS: rep.WallMS, Runs: len(rep.Runs), Agents: []string{}}
	for _, g := range rep.Groups {
		ri.Agents = append(ri.Agents, groupLabel(g.Agent, g.Model))
	}
	for _, r := range rep.Runs {
		if r.Task != "" && !slices.Contains(ri.Tasks, r.Task) {
			ri.Tasks = append(ri.Tasks, r.Task)
		}
	}
	return ri
}

func groupLabel(agent, model string) string {
	if model == "" {
		return agent
	}
	return agent + " · " + model
}

// Interval is a group's pass rate with its 95 % Wilson score interval.
// Basis is "check" when the rate counts the runs whose check passed, or
// "success" when no run had a check and it counts the runs that ended in
// success.
type Interval struct {
	Label string  `json:"label"`
	Agent string  `json:"agent"`
	Model string  `json:"model,omitempty"`
	Basis string  `json:"basis"`
	K     int     `json:"k"`
	N     int     `json:"n"`
	Rate  float64 `json:"rate"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

// benchDetail is the body of GET /api/bench/{id}.
type benchDetail struct {
	ReportInfo
	Intervals []Interval    `json:"intervals"`
	Report    *bench.Report `json:"report"`
}

func intervals(rep *bench.Report) []Interval {
	out := make([]Interval, 0, len(rep.Groups))
	for _, g := range rep.Groups {
		iv := Interval{Label: groupLabel(g.Agent, g.Model), Agent: g.Agent, Model: g.Model, Basis: "check", K: g.Passed, N: g.Checked}
		if g.Checked == 0 {
			iv.Basis, iv.K, iv.N = "success", g.Succeeded, g.Runs
		}
		iv.Rate, iv.Lo, iv.Hi = wilson(iv.K, iv.N)
		out = append(out, iv)
	}
	return out
}

// wilson returns k/n and its 95 % Wilson score interval; all zero for n 0.
func wilson(k, n int) (rate, lo, hi float64) {
	if n <= 0 {
		return 0, 0, 0
	}
	const z = 1.959963984540054
	p, fn := float64(k)/float64(n), float64(n)
	den := 1 + z*z/fn
	mid := (p + z*z/(2*fn)) / den
	half := z * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn)) / den
	return p, math.Max(0, mid-half), math.Min(1, mid+half)
}

func (s *Server) listBench(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Bench == nil {
		writeJSON(w, http.StatusOK, map[string]any{"reports": []ReportInfo{}})
		return
	}
	list, err := bench.Summaries(*s.cfg.Bench, infoOf)
	if err != nil {
		jsonError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"reports": list})
}

func (s *Server) getBench(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if s.cfg.Bench == nil {
		jsonError(w, http.StatusNotFound, "no such bench report: "+id)
		return
	}
	rep, err := s.cfg.Bench.Load(id)
	if errors.Is(err, fs.ErrNotExist) {
		jsonError(w, http.StatusNotFound, "no such bench report: "+id)
		return
	}
	if err != nil {
		jsonError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, benchDetail{ReportInfo: infoOf(rep), Intervals: intervals(rep), Report: rep})
}
