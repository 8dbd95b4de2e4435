package main

import (
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestPairAlternates: a pair runs its sides in the order asked and
// returns them in the order given, whichever ran first.
func TestPairAlternates(t *testing.T) {
	b := &bench{}
	for _, aFirst := range []bool{true, false} {
		var order []string
		side := func(name string, wall float64) func() (usage, error) {
			return func() (usage, error) { order = append(order, name); return usage{Wall: wall}, nil }
		}
		ua, uc, err := b.pair(aFirst, side("a", 1), side("c", 2))
		if err != nil || ua.Wall != 1 || uc.Wall != 2 {
			t.Fatalf("aFirst %v: got %v %v %v", aFirst, ua, uc, err)
		}
		if want := map[bool]string{true: "a", false: "c"}[aFirst]; order[0] != want {
			t.Errorf("aFirst %v: ran %v", aFirst, order)
		}
	}
}

// TestStepsNamed: -run picks steps by these names, one each.
func TestStepsNamed(t *testing.T) {
	seen := map[string]bool{}
	for _, st := range (&bench{}).steps() {
		if seen[st.name] || !regexp.MustCompile(`^[a-z]+$`).MatchString(st.name) {
			t.Errorf("step name %q: duplicate or not a plain word", st.name)
		}
		seen[st.name] = true
	}
	for _, want := range []string{"latency", "wrap", "idle", "liveview", "session"} {
		if !seen[want] {
			t.Errorf("no step %q", want)
		}
	}
}

// TestThroughputAgents: the agents measured are the table's, in its order,
// that have captures to repeat.
func TestThroughputAgents(t *testing.T) {
	if got, want := agents(filepath.Join("..", "..")), []string{"claude", "codex", "cursor", "opencode", "gemini"}; !slices.Equal(got, want) {
		t.Fatalf("agents = %v, want %v", got, want)
	}
}
