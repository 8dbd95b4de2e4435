package mcpserver

import (
	"context"
	"math"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentharness/harness/process"
)

// attach makes the run_agent call with ctx the one that progress and log
// notifications of the run belong to; token is its progress token (nil:
// no progress notifications).
func (r *run) attach(ctx context.Context, token any) {
	r.mu.Lock()
	r.watchCtx, r.watchToken = ctx, token
	r.mu.Unlock()
	select {
	case r.poke <- struct{}{}: // the first progress notification at once
	default:
	}
}

func (r *run) detach() {
	r.mu.Lock()
	r.watchCtx, r.watchToken = nil, nil
	r.mu.Unlock()
}

func (r *run) watcher() (context.Context, any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.watchCtx, r.watchToken
}

// notifier sends the run's notifications to session ss until the run is
// over: progress at each interval while a run_agent call with a progress
// token waits, and log notifications as the run's events queue them, at
// most one warning of each code per LogInterval: a tool_stalled warning
// does not hold back the idle warning that comes before the run is ended.
// It closes r.notified when done.
func (s *Server) notifier(r *run, ss *mcp.ServerSession) {
	defer process.ContainPanic() // Options.Now is the caller's
	defer close(r.notified)
	tick := time.NewTicker(s.o.ProgressInterval)
	defer tick.Stop()
	lastWarn := map[any]time.Time{} // by code
	var lastProgress float64
	sentFirst := false
	logs := func() {
		for _, n := range r.takeNotes() {
			// A fatal error's message, as the answer has it (redactError);
			// r.h is set by now, unlike when the event queued it.
			if msg, ok := n.data["message"].(string); ok {
				n.data["message"] = r.h.Redactor().RedactString(msg)
			}
			now := s.o.Now()
			if n.level == "warning" {
				code := n.data["code"]
				if last, ok := lastWarn[code]; ok && now.Sub(last) < s.o.LogInterval {
					continue
				}
				lastWarn[code] = now
			}
			ctx, cancel := s.notifyCtx(r)
			_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(n.level), Logger: "harness", Data: n.data})
			cancel()
		}
	}
	progress := func(msg string) {
		ctx, token := r.watcher()
		if ctx == nil || token == nil {
			return
		}
		p := math.Round(s.o.Now().Sub(r.start).Seconds()*1000) / 1000
		if p <= lastProgress {
			p = lastProgress + 0.001
		}
		lastProgress = p
		if msg == "" {
			msg = r.activity(s.o.Now())
		}
		_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p, Message: msg})
	}
	for {
		select {
		case <-r.done:
			logs()
			return
		case <-r.poke:
			logs()
			if ctx, token := r.watcher(); !sentFirst && ctx != nil && token != nil {
				sentFirst = true
				progress("started " + r.agent + " as run " + r.id)
			}
		case <-tick.C:
			progress("")
		}
	}
}

// notifyCtx is the context of a log notification: the waiting run_agent
// call's (so a streamable HTTP client gets it on that call's stream), else
// a short detached one.
func (s *Server) notifyCtx(r *run) (context.Context, context.CancelFunc) {
	if ctx, _ := r.watcher(); ctx != nil {
		return context.WithTimeout(ctx, 5*time.Second)
	}
	return context.WithTimeout(context.Background(), 5*time.Second)
}
