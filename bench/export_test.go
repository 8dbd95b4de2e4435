package bench

// SetLimits lowers MaxRuns and MaxGroups for a test, which must not be
// parallel; the returned func restores them.
func SetLimits(runs, groups int) (restore func()) {
	maxRuns, maxGroups = runs, groups
	return func() { maxRuns, maxGroups = MaxRuns, MaxGroups }
}
