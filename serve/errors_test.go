package serve

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/logger"
)

// TestIntervalsNoRun: a group with no run (all skipped) has the interval
// of nothing known, [0, 1], as bench.Wilson says; serve's own copy said
// [0, 0], a certainty of failure.
func TestIntervalsNoRun(t *testing.T) {
	rep := &bench.Report{Groups: []bench.Group{
		{Agent: "claude", Model: "sonnet", Skipped: 2},
		{Agent: "codex", Runs: 3, Checked: 3, Passed: 2},
	}}
	iv := intervals(rep)
	require.Equal(t, Interval{Label: "claude · sonnet", Agent: "claude", Model: "sonnet", Basis: "success", Lo: 0, Hi: 1}, iv[0])
	lo, hi := bench.Wilson(2, 3)
	require.Equal(t, Interval{Label: "codex", Agent: "codex", Basis: "check", K: 2, N: 3, Rate: 2.0 / 3, Lo: lo, Hi: hi}, iv[1])
}

// TestStatusOf: the one mapping of a handler's error to its status.
func TestStatusOf(t *testing.T) {
	for name, tc := range map[string]struct {
		err    error
		status int
	}{
		"own-status":   {httpErrorf(http.StatusConflict, "busy"), http.StatusConflict},
		"wrapped-own":  {fmt.Errorf("x: %w", withStatus(http.StatusNotFound, errors.New("gone"))), http.StatusNotFound},
		"task-refused": {fmt.Errorf("start: %w", &harness.TaskError{Err: errors.New("no such agent")}), http.StatusBadRequest},
		"bad-mock":     {fmt.Errorf("%w: nope", errBadMock), http.StatusBadRequest},
		"ambiguous":    {fmt.Errorf("%w: r matches a, b", logger.ErrAmbiguous), http.StatusBadRequest},
		"closing":      {errClosing, http.StatusServiceUnavailable},
		"session-over": {fmt.Errorf("%w: the agent exited", harness.ErrSessionOver), http.StatusConflict},
		"queue-full":   {harness.ErrQueueFull, http.StatusTooManyRequests},
		"anything":     {errors.New("disk on fire"), http.StatusInternalServerError},
	} {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, tc.status, statusOf(tc.err))
			rec := httptest.NewRecorder()
			handle(func(http.ResponseWriter, *http.Request) error { return tc.err })(rec, httptest.NewRequest("GET", "/", nil))
			require.Equal(t, tc.status, rec.Code)
			require.JSONEq(t, fmt.Sprintf(`{"error":%q}`, tc.err.Error()), rec.Body.String())
		})
	}
	require.Nil(t, withStatus(http.StatusBadRequest, nil))
}
