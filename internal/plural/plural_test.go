package plural

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 runs"}, {1, "1 run"}, {2, "2 runs"}, {-1, "-1 run"}, {21, "21 runs"}} {
		if got := Count(c.n, "run"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := Count(1, "tool call"); got != "1 tool call" {
		t.Errorf("int: %q", got)
	}
}
