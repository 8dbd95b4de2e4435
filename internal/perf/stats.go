package main

import (
	"math"
	"slices"
	"time"
)

// percentile is the p-th percentile (0..100) of xs by linear interpolation
// between closest ranks; NaN for no samples. xs is not modified.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if p <= 0 {
		return s[0]
	}
	if p >= 100 {
		return s[len(s)-1]
	}
	r := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(r))
	if lo+1 >= len(s) {
		return s[lo]
	}
	return s[lo] + (r-float64(lo))*(s[lo+1]-s[lo])
}

// median is the 50th percentile.
func median(xs []float64) float64 { return percentile(xs, 50) }

// durations turns seconds into durations, for printing.
func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
