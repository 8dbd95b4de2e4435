package bench

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
)

// z95 is the standard normal quantile of a two-sided 95 % interval.
const z95 = 1.959963984540054

// DefaultSeed seeds the bootstrap of a report that names none.
const DefaultSeed uint64 = 1

// bootstrapResamples is how many resamples a bootstrap interval draws:
// enough for stable 2.5 and 97.5 percentiles, cheap for hundreds of runs.
const bootstrapResamples = 2000

// Wilson returns the Wilson score 95 % interval of k successes in n
// trials. Unlike the normal (Wald) interval it stays inside [0, 1] and is
// not empty at 0/n or n/n, which is where small benchmarks live. n == 0
// gives [0, 1]: nothing is known.
func Wilson(k, n int) (low, high float64) {
	if n <= 0 {
		return 0, 1
	}
	k = min(max(k, 0), n)
	p, nf, z2 := float64(k)/float64(n), float64(n), z95*z95
	denom := 1 + z2/nf
	center := (p + z2/(2*nf)) / denom
	half := z95 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / denom
	low, high = max(center-half, 0), min(center+half, 1)
	// Rounding must not leave the estimate outside its own interval.
	return min(low, p), max(high, p)
}

// McNemarExact returns the two-sided p-value of the exact McNemar test
// (a sign test on the discordant pairs): onlyA pairs where only A
// passed, onlyB where only B did. Under "no difference" each discordant
// pair goes either way with probability 1/2. No discordant pair gives 1.
func McNemarExact(onlyA, onlyB int) float64 {
	n := onlyA + onlyB
	if n <= 0 {
		return 1
	}
	k := min(onlyA, onlyB)
	// P(X <= k) for X ~ Binomial(n, 1/2), summed in log space so large n
	// does not overflow.
	lgN, _ := math.Lgamma(float64(n + 1))
	var cdf float64
	for i := 0; i <= k; i++ {
		li, _ := math.Lgamma(float64(i + 1))
		lr, _ := math.Lgamma(float64(n - i + 1))
		cdf += math.Exp(lgN - li - lr - float64(n)*math.Ln2)
	}
	return min(1, 2*cdf)
}

// FisherExact returns the two-sided p-value of Fisher's exact test of
// k1 of n1 against k2 of n2 (the table [[k1, n1−k1], [k2, n2−k2]]): the
// sum of the hypergeometric probabilities, given the margins, of every
// table no more likely than this one (as R's fisher.test, with its
// relative tolerance 1e-7 for ties). An empty side gives 1.
func FisherExact(k1, n1, k2, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	k1, k2 = min(max(k1, 0), n1), min(max(k2, 0), n2)
	k := k1 + k2
	// Log probabilities (by Lgamma), so n in the thousands does not
	// overflow the binomial coefficients.
	lchoose := func(n, r int) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(r + 1))
		c, _ := math.Lgamma(float64(n - r + 1))
		return a - b - c
	}
	lp := func(x int) float64 { return lchoose(n1, x) + lchoose(n2, k-x) }
	obs := lp(k1)
	// Summed relative to the observed table's probability: no underflow
	// of the terms that count.
	var sum float64
	for x := max(0, k-n2); x <= min(n1, k); x++ {
		if l := lp(x); l <= obs+1e-7 {
			sum += math.Exp(l - obs)
		}
	}
	return min(1, sum*math.Exp(obs-lchoose(n1+n2, k)))
}

// PairedDiff returns the difference in rate between A and B over n
// paired trials (both: both passed, onlyA, onlyB, neither: neither) with
// Newcombe's 95 % interval for paired proportions (his method 10, built
// from the two Wilson intervals and the pairs' correlation). n == 0
// gives 0 in [-1, 1].
func PairedDiff(both, onlyA, onlyB, neither int) (diff, low, high float64) {
	n := both + onlyA + onlyB + neither
	if n <= 0 {
		return 0, -1, 1
	}
	nf := float64(n)
	p1, p2 := float64(both+onlyA)/nf, float64(both+onlyB)/nf
	l1, u1 := Wilson(both+onlyA, n)
	l2, u2 := Wilson(both+onlyB, n)
	var phi float64
	if d := float64(both+onlyA) * float64(onlyB+neither) * float64(both+onlyB) * float64(onlyA+neither); d > 0 {
		phi = (float64(both)*float64(neither) - float64(onlyA)*float64(onlyB)) / math.Sqrt(d)
	}
	diff = p1 - p2
	dl := math.Sqrt(max(0, sq(p1-l1)-2*phi*(p1-l1)*(u2-p2)+sq(u2-p2)))
	du := math.Sqrt(max(0, sq(u1-p1)-2*phi*(u1-p1)*(p2-l2)+sq(p2-l2)))
	low, high = max(diff-dl, -1), min(diff+du, 1)
	return diff, min(low, diff), max(high, diff)
}

func sq(x float64) float64 { return x * x }

// BootstrapMedian returns a 95 % percentile-bootstrap interval of the
// median (Percentile 50) of xs, from resamples drawn with rng: the 2.5th
// and 97.5th percentiles of the resampled medians, widened if need be to
// hold the sample's own median. No values give zeros.
func BootstrapMedian[T int64 | float64](xs []T, rng *rand.Rand) (low, high T) {
	if len(xs) == 0 {
		return 0, 0
	}
	est := Percentile(xs, 50)
	meds := make([]T, bootstrapResamples)
	buf := make([]T, len(xs))
	for i := range meds {
		for j := range buf {
			buf[j] = xs[rng.IntN(len(xs))]
		}
		slices.Sort(buf)
		meds[i] = buf[(len(buf)+1)/2-1] // nearest-rank median, as Percentile
	}
	low, high = Percentile(meds, 2.5), Percentile(meds, 97.5)
	return min(low, est), max(high, est)
}

// rngFor is the bootstrap generator of one group and figure: seeded by
// the report's seed and the names, so a group's interval does not depend
// on which other groups the report holds, or their order.
func rngFor(seed uint64, names ...string) *rand.Rand {
	h := fnv.New64a()
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte{0})
	}
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// addIntervals fills the group's intervals from its runs.
func addIntervals(g *Group, runs []RunReport, seed uint64) {
	g.SuccessCILow, g.SuccessCIHigh = Wilson(g.Succeeded, g.Runs)
	if g.Checked > 0 {
		lo, hi := Wilson(g.Passed, g.Checked)
		g.PassCILow, g.PassCIHigh = &lo, &hi
	}
	var walls, tokens []int64
	var costs []float64
	for _, r := range runs {
		if !r.ran() {
			continue
		}
		walls = append(walls, r.WallMS)
		tokens = append(tokens, r.Tokens.Input+r.Tokens.Output)
		if r.CostUSD != nil {
			costs = append(costs, *r.CostUSD)
		}
	}
	key := []string{g.Agent, g.Model, g.Task}
	g.WallP50CILowMS, g.WallP50CIHighMS = BootstrapMedian(walls, rngFor(seed, append(key, "wall")...))
	g.TokensP50 = Percentile(tokens, 50)
	g.TokensP50CILow, g.TokensP50CIHigh = BootstrapMedian(tokens, rngFor(seed, append(key, "tokens")...))
	if len(costs) > 0 {
		lo, hi := BootstrapMedian(costs, rngFor(seed, append(key, "cost")...))
		g.CostP50CILowUSD, g.CostP50CIHighUSD = &lo, &hi
	}
}

// Comparison pairs two agent × model groups on the runs of the same task
// and repeat that both made: the difference in pass rate (or, when no
// pair was checked on both sides, in success rate), its Newcombe 95 %
// interval and the exact McNemar p-value.
type Comparison struct {
	AgentA string `json:"agent_a"`
	ModelA string `json:"model_a,omitempty"`
	AgentB string `json:"agent_b"`
	ModelB string `json:"model_b,omitempty"`
	// Metric is "pass" (check verdicts) or "success" (run status).
	Metric  string  `json:"metric"`
	Pairs   int     `json:"pairs"`
	Both    int     `json:"both"`    // pairs where both passed
	OnlyA   int     `json:"only_a"`  // only A passed
	OnlyB   int     `json:"only_b"`  // only B passed
	Neither int     `json:"neither"` // neither passed
	RateA   float64 `json:"rate_a"`
	RateB   float64 `json:"rate_b"`
	// Diff is RateA - RateB.
	Diff       float64 `json:"diff"`
	DiffCILow  float64 `json:"diff_ci_low"`
	DiffCIHigh float64 `json:"diff_ci_high"`
	PValue     float64 `json:"p_value"`
	// Winner is "a" or "b" only when the interval excludes zero and the
	// p-value is below 0.05; "" otherwise: no difference shown.
	Winner string `json:"winner,omitempty"`
}

type pairKey struct {
	task   string
	repeat int
}

// Compare pairs every two groups of runs (by agent and model, in order of
// first appearance).
func Compare(runs []RunReport) []Comparison {
	type gk struct{ agent, model string }
	var order []gk
	by := map[gk]map[pairKey]RunReport{}
	for _, r := range runs {
		k := gk{r.Agent, r.Model}
		if by[k] == nil {
			order = append(order, k)
			by[k] = map[pairKey]RunReport{}
		}
		if r.ran() { // a run whose agent never ran is no side of a pair
			by[k][pairKey{r.Task, r.Repeat}] = r
		}
	}
	var out []Comparison
	for i, a := range order {
		for _, b := range order[i+1:] {
			c := Comparison{AgentA: a.agent, ModelA: a.model, AgentB: b.agent, ModelB: b.model}
			pairUp(&c, by[a], by[b])
			out = append(out, c)
		}
	}
	return out
}

func pairUp(c *Comparison, a, b map[pairKey]RunReport) {
	verdict := func(r RunReport) (passed, ok bool) {
		if ch := r.Check; ch != nil && (ch.Error == "" || ch.TimedOut) {
			return ch.Passed, true
		}
		return false, false
	}
	count := func(outcome func(RunReport) (bool, bool)) {
		c.Pairs, c.Both, c.OnlyA, c.OnlyB, c.Neither = 0, 0, 0, 0, 0
		for k, ra := range a {
			rb, ok := b[k]
			if !ok {
				continue
			}
			pa, oka := outcome(ra)
			pb, okb := outcome(rb)
			if !oka || !okb {
				continue
			}
			c.Pairs++
			switch {
			case pa && pb:
				c.Both++
			case pa:
				c.OnlyA++
			case pb:
				c.OnlyB++
			default:
				c.Neither++
			}
		}
	}
	c.Metric = "pass"
	count(verdict)
	if c.Pairs == 0 {
		c.Metric = "success"
		count(func(r RunReport) (bool, bool) { return r.Succeeded(), true })
	}
	if c.Pairs > 0 {
		c.RateA = float64(c.Both+c.OnlyA) / float64(c.Pairs)
		c.RateB = float64(c.Both+c.OnlyB) / float64(c.Pairs)
	}
	c.Diff, c.DiffCILow, c.DiffCIHigh = PairedDiff(c.Both, c.OnlyA, c.OnlyB, c.Neither)
	c.PValue = McNemarExact(c.OnlyA, c.OnlyB)
	switch {
	case c.PValue >= 0.05:
	case c.DiffCILow > 0:
		c.Winner = "a"
	case c.DiffCIHigh < 0:
		c.Winner = "b"
	}
}

// Summarize recomputes the report's aggregates from its runs: Groups,
// TaskGroups (when there is more than one task) and Comparisons, every
// interval seeded by r.Seed (DefaultSeed when 0).
func Summarize(r *Report) {
	if r.Seed == 0 {
		r.Seed = DefaultSeed
	}
	r.Groups = summarize(r.Runs, r.Seed, false)
	r.TaskGroups = nil
	tasks := map[string]bool{}
	for _, run := range r.Runs {
		tasks[run.Task] = true
	}
	if len(tasks) > 1 {
		r.TaskGroups = summarize(r.Runs, r.Seed, true)
	}
	r.Comparisons = Compare(r.Runs)
}

func summarize(runs []RunReport, seed uint64, byTask bool) []Group {
	type key struct{ agent, model, task string }
	var order []key
	by := map[key][]RunReport{}
	for _, r := range runs {
		k := key{r.Agent, r.Model, ""}
		if byTask {
			k.task = r.Task
		}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], r)
	}
	out := make([]Group, 0, len(order))
	for _, k := range order {
		g := aggregate(k.agent, k.model, by[k])
		g.Task = k.task
		addIntervals(&g, by[k], seed)
		out = append(out, g)
	}
	return out
}
