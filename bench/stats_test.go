package bench_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
)

func TestWilsonKnownValues(t *testing.T) {
	for _, tc := range []struct {
		name     string
		k, n     int
		low, hig float64
	}{
		// Reference values: Wilson score interval, z = 1.959964.
		{"3-of-4", 3, 4, 0.300642, 0.954413},
		{"0-of-20", 0, 20, 0, 0.161125},
		{"20-of-20", 20, 20, 0.838875, 1},
		{"2-of-3", 2, 3, 0.207660, 0.938508},
		{"none", 0, 0, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi := bench.Wilson(tc.k, tc.n)
			require.InDelta(t, tc.low, lo, 1e-6)
			require.InDelta(t, tc.hig, hi, 1e-6)
		})
	}
}

func TestWilsonProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for range 500 {
		n := 1 + rng.IntN(200)
		k := rng.IntN(n + 1)
		lo, hi := bench.Wilson(k, n)
		p := float64(k) / float64(n)
		require.True(t, 0 <= lo && lo <= p && p <= hi && hi <= 1, "%d/%d: [%v, %v]", k, n, lo, hi)
		// The same rate on four times the trials is known better.
		lo4, hi4 := bench.Wilson(4*k, 4*n)
		require.Less(t, hi4-lo4, hi-lo, "%d/%d vs %d/%d", k, n, 4*k, 4*n)
	}
}

func TestMcNemarExact(t *testing.T) {
	// 10 pairs only A passed, 2 only B: 2 × P(X <= 2 | n = 12, 1/2) = 2 × 79/4096.
	require.InDelta(t, 158.0/4096, bench.McNemarExact(10, 2), 1e-12)
	require.InDelta(t, 158.0/4096, bench.McNemarExact(2, 10), 1e-12, "two-sided: symmetric")
	require.Equal(t, 1.0, bench.McNemarExact(0, 0))
	require.Equal(t, 1.0, bench.McNemarExact(3, 3))
	require.InDelta(t, 2.0/8, bench.McNemarExact(3, 0), 1e-12, "3 of 3 discordant one way is not significant")
	require.InDelta(t, 2.0/1024, bench.McNemarExact(0, 10), 1e-12)
	p := bench.McNemarExact(600, 400) // large n stays finite
	require.True(t, p > 0 && p < 1e-9, "%v", p)
}

func TestFisherExact(t *testing.T) {
	for _, tc := range []struct {
		name           string
		k1, n1, k2, n2 int
		p              float64
	}{
		// Two-sided, as R's fisher.test: exact fractions, decimals beside.
		{"tea-tasting", 3, 4, 1, 4, 17.0 / 35},               // 0.4857142857
		{"2/2-vs-0/2", 2, 2, 0, 2, 1.0 / 3},                  // not significant
		{"10/10-vs-0/10", 10, 10, 0, 10, 1.0 / 92378},        // 1.0825088224e-05
		{"wikipedia", 1, 10, 11, 14, 41.0 / 14858},           // [[1,9],[11,3]]: 0.0027594562
		{"7/10-vs-2/10", 7, 10, 2, 10, 293.0 / 4199},         // 0.0697785187
		{"unbalanced", 1, 8, 5, 6, 1.0 / 39},                 // 0.0256410256; doubling a tail: 0.0326
		{"20/20-vs-0/20", 20, 20, 0, 20, 2.0 / 137846528820}, // 1.4508889104e-11
		{"equal", 0, 5, 0, 5, 1},
		{"empty-side", 3, 4, 0, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := bench.FisherExact(tc.k1, tc.n1, tc.k2, tc.n2)
			require.InEpsilon(t, tc.p, p, 1e-9)
			require.InEpsilon(t, tc.p, bench.FisherExact(tc.k2, tc.n2, tc.k1, tc.n1), 1e-9, "symmetric in the sides")
			require.InEpsilon(t, tc.p, bench.FisherExact(tc.n1-tc.k1, tc.n1, tc.n2-tc.k2, tc.n2), 1e-9, "and in pass/fail")
		})
	}
	// Thousands of runs: log-gamma keeps it finite and close (exact
	// values from integer arithmetic).
	require.InEpsilon(t, 0.20574199522169187, bench.FisherExact(1500, 3000, 1450, 3000), 1e-9)
	require.InEpsilon(t, 4.299952425047867e-19, bench.FisherExact(600, 1000, 400, 1000), 1e-9)
}

func TestPairedDiff(t *testing.T) {
	d, lo, hi := bench.PairedDiff(0, 0, 0, 0)
	require.Equal(t, []float64{0, -1, 1}, []float64{d, lo, hi})
	rng := rand.New(rand.NewPCG(3, 3))
	for range 300 {
		a, b, c, e := rng.IntN(20), rng.IntN(20), rng.IntN(20), rng.IntN(20)
		if a+b+c+e == 0 {
			continue
		}
		d, lo, hi := bench.PairedDiff(a, b, c, e)
		require.InDelta(t, float64(b-c)/float64(a+b+c+e), d, 1e-12)
		require.True(t, -1 <= lo && lo <= d && d <= hi && hi <= 1, "%d %d %d %d: %v in [%v, %v]", a, b, c, e, d, lo, hi)
		_, lo4, hi4 := bench.PairedDiff(4*a, 4*b, 4*c, 4*e)
		require.LessOrEqual(t, hi4-lo4, hi-lo+1e-12)
	}
	// All discordant one way, 20 pairs: the interval excludes zero.
	_, lo, _ = bench.PairedDiff(0, 20, 0, 0)
	require.Greater(t, lo, 0.0)
}

func TestUnpairedDiff(t *testing.T) {
	d, lo, hi := bench.UnpairedDiff(0, 10, 10, 10)
	require.Equal(t, -1.0, d)
	require.Less(t, hi, 0.0, "all fail vs all pass excludes zero")
	require.GreaterOrEqual(t, lo, -1.0)
	d, lo, hi = bench.UnpairedDiff(5, 10, 5, 10)
	require.Equal(t, 0.0, d)
	require.True(t, lo < 0 && hi > 0)
}

func TestBootstrapMedian(t *testing.T) {
	xs := []int64{5, 1, 9, 3, 7, 2, 8}
	lo1, hi1 := bench.BootstrapMedian(xs, rand.New(rand.NewPCG(1, 2)))
	lo2, hi2 := bench.BootstrapMedian(xs, rand.New(rand.NewPCG(1, 2)))
	require.Equal(t, []int64{lo1, hi1}, []int64{lo2, hi2}, "seeded: reproducible")
	med := bench.Percentile(xs, 50)
	require.True(t, lo1 <= med && med <= hi1)
	require.True(t, lo1 >= 1 && hi1 <= 9, "within the data")
	one, _ := bench.BootstrapMedian([]int64{4}, rand.New(rand.NewPCG(1, 2)))
	require.Equal(t, int64(4), one)
	z1, z2 := bench.BootstrapMedian([]float64(nil), rand.New(rand.NewPCG(1, 2)))
	require.Zero(t, z1+z2)

	// Property: the interval holds the median and narrows as n grows.
	rng := rand.New(rand.NewPCG(9, 9))
	sample := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = rng.NormFloat64()*10 + 100
		}
		return xs
	}
	small, large := sample(10), sample(1000)
	ls, hs := bench.BootstrapMedian(small, rand.New(rand.NewPCG(1, 1)))
	ll, hl := bench.BootstrapMedian(large, rand.New(rand.NewPCG(1, 1)))
	require.True(t, ls <= bench.Percentile(small, 50) && bench.Percentile(small, 50) <= hs)
	require.True(t, ll <= bench.Percentile(large, 50) && bench.Percentile(large, 50) <= hl)
	require.Less(t, hl-ll, hs-ls)
}

func TestComparisonsMarkAWinnerOnlyWhenShown(t *testing.T) {
	runs := func(aPass, bPass []bool) []bench.RunReport {
		var out []bench.RunReport
		for i := range aPass {
			// claude first: the comparison's A is the agent the runs name first.
			for _, r := range []struct {
				agent string
				pass  bool
			}{{"claude", aPass[i]}, {"codex", bPass[i]}} {
				out = append(out, bench.RunReport{Agent: r.agent, Task: "t", Repeat: i + 1, Status: "success",
					Check: &bench.CheckResult{Passed: r.pass}})
			}
		}
		return out
	}
	many := func(n int, v bool) []bool {
		out := make([]bool, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	r := &bench.Report{Runs: runs(many(20, true), many(20, false))}
	bench.Summarize(r)
	require.Len(t, r.Comparisons, 1)
	c := r.Comparisons[0]
	require.Equal(t, "pass", c.Metric)
	require.Equal(t, 20, c.Pairs)
	require.Equal(t, 20, c.OnlyA)
	require.Less(t, c.PValue, 1e-5)
	require.Equal(t, "a", c.Winner)

	r = &bench.Report{Runs: runs(many(3, true), many(3, false))}
	bench.Summarize(r)
	require.Empty(t, r.Comparisons[0].Winner, "3 of 3 is no evidence: p = 0.25")

	r = &bench.Report{Runs: runs(many(20, true), many(20, true))}
	bench.Summarize(r)
	require.Empty(t, r.Comparisons[0].Winner)
}
