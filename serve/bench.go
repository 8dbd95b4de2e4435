package serve

import (
	"errors"
	"io/fs"
	"net/http"
	"time"

	"github.com/agentharness/harness/bench"
)

// ReportInfo is one stored bench report, as GET /api/bench lists it:
// bench's listing (bench.Store.List), in the API's shape (agents are the
// groups' labels; no file path).
type ReportInfo struct {
	ID      string    `json:"id"`
	Started time.Time `json:"started"`
	WallMS  int64     `json:"wall_ms"`
	Agents  []string  `json:"agents"`
	Tasks   []string  `json:"tasks,omitempty"`
	Runs    int       `json:"runs"`
}

func infoOf(in bench.ReportInfo) ReportInfo {
	return ReportInfo{ID: in.ID, Started: in.Started, WallMS: in.WallMS, Agents: in.Groups, Tasks: in.Tasks, Runs: in.Runs}
}

// Interval is a group's pass rate with its 95 % Wilson score interval
// (bench.Wilson: [0, 1] when there is no run, as nothing is known).
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
		iv := Interval{Label: g.Label(), Agent: g.Agent, Model: g.Model, Basis: "check", K: g.Passed, N: g.Checked}
		if g.Checked == 0 {
			iv.Basis, iv.K, iv.N = "success", g.Succeeded, g.Runs
		}
		if iv.N > 0 {
			iv.Rate = float64(iv.K) / float64(iv.N)
		}
		iv.Lo, iv.Hi = bench.Wilson(iv.K, iv.N)
		out = append(out, iv)
	}
	return out
}

func (s *Server) listBench(w http.ResponseWriter, r *http.Request) error {
	list := []ReportInfo{}
	if s.benches != nil {
		stored, err := s.benches.List()
		if err != nil {
			return err
		}
		for _, in := range stored {
			list = append(list, infoOf(in))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"reports": list})
	return nil
}

func (s *Server) getBench(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if s.cfg.Bench == nil {
		return httpErrorf(http.StatusNotFound, "no such bench report: %s", id)
	}
	rep, err := s.cfg.Bench.Load(id)
	if errors.Is(err, fs.ErrNotExist) {
		return httpErrorf(http.StatusNotFound, "no such bench report: %s", id)
	}
	if errors.Is(err, bench.ErrNotReport) {
		// Not a report (corrupt, a FIFO): the list leaves it out, so it
		// is no report here either. The message names the id, not the
		// file's path on this host.
		return withStatus(http.StatusNotFound, err)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, benchDetail{ReportInfo: infoOf(s.cfg.Bench.Info(rep)), Intervals: intervals(rep), Report: rep})
	return nil
}
