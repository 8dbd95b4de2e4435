package mockmodel

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/fifotest"
	"github.com/agentharness/harness/internal/regfile"
)

// TestParseScenarioRefuses: a scenario the server could not serve as
// written is refused with one line naming why. Before, a typo's error
// named no key, a delay past int64 nanoseconds slept nothing, negative or
// inconsistent counts came out of the agents as other numbers, and a nan
// argument turned the call's arguments into {}.
func TestParseScenarioRefuses(t *testing.T) {
	for name, c := range map[string]struct{ toml, want string }{
		"unknown key":       {"[[turn]]\ntxet = [\"a\"]\n", "unknown key"},
		"negative usage":    {"[[turn]]\nusage = { input = -5, output = 2 }\n", "turn 0: usage: a negative count"},
		"cached over input": {"[[turn]]\nusage = { input = 5, output = 2, cached = 100 }\n", "cached 100 over input 5"},
		"reasoning over":    {"[[turn]]\nusage = { input = 5, output = 2, reasoning = 3 }\n", "reasoning 3 over output 2"},
		"side usage":        {"side_usage = { input = -1 }\n[[turn]]\ntext = [\"a\"]\n", "side_usage: a negative count"},
		"huge delay":        {"[[turn]]\ndelay_ms = 10000000000000\ntext = [\"a\"]\n", "a delay over a day"},
		"huge retry":        {"[[turn]]\nstatus = 429\nretry_after_ms = 10000000000000\n", "a delay over a day"},
		"nan args":          {"[[turn]]\n[[turn.tool]]\nkind = \"Bash\"\nargs = { weird = nan }\n", "args are not JSON"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseScenario([]byte(c.toml))
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line with %q", err, c.want)
			}
		})
	}
	_, err := ParseScenario([]byte("[[turn]]\ntxet = [\"a\"]\n"))
	if !strings.Contains(err.Error(), "txet") {
		t.Errorf("the unknown key is not named: %v", err)
	}
}

// TestScenarioFileFIFO: a scenario file that is a FIFO is refused at once;
// its read waited for a writer, and harness run --mock with it, forever.
func TestScenarioFileFIFO(t *testing.T) {
	fifo := fifotest.Make(t, filepath.Join(t.TempDir(), "s.toml"))
	_, err := FindScenario(fifo)
	if !errors.Is(err, regfile.ErrNotRegular) {
		t.Fatalf("error %v, want not a regular file", err)
	}
}

// TestGeminiUsageCountsThoughtsApart: the Gemini API's candidates leave
// the thoughts out and its total holds them; the Gemini CLI's stats then
// give harness the thoughts as total - prompt - candidates. Sent with the
// thoughts inside the candidates, a scenario's reasoning came out 0.
func TestGeminiUsageCountsThoughtsApart(t *testing.T) {
	got := geminiAPI{}.usage(Usage{InputTokens: 1000, OutputTokens: 50, CachedTokens: 400, ReasoningTokens: 7})
	want := map[string]any{"promptTokenCount": 1000, "candidatesTokenCount": 43, "thoughtsTokenCount": 7,
		"totalTokenCount": 1050, "cachedContentTokenCount": 400}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

// FuzzParseScenario: a scenario file, the user's TOML, never panics the
// parser, and what it accepts is served as written: counts the APIs can
// report, delays that fit, tool arguments that are JSON.
func FuzzParseScenario(f *testing.F) {
	for _, s := range []string{
		"[[turn]]\ntext = [\"a\"]\n",
		"[[turn]]\ndelay_ms = 5\nusage = { input = 10, output = 2, cached = 3, reasoning = 1 }\n[[turn.tool]]\nkind = \"shell\"\ncommand = \"echo\"\n",
		"[[turn]]\n[[turn.tool]]\nkind = \"Bash\"\nargs = { a = 1.5, b = [1, 2] }\n",
		"[[turn]]\nstatus = 429\nretry_after_ms = 10\n",
		"side_usage = { input = 1 }\n[[turn]]\nafter = \"x\"\nrequires = \"y\"\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := ParseScenario(data)
		if err != nil {
			return
		}
		if len(sc.Turns) == 0 {
			t.Fatal("accepted with no turn")
		}
		for _, tu := range sc.Turns {
			if tu.Delay < 0 || tu.RetryAfter < 0 || tu.Usage.check() != nil {
				t.Fatalf("accepted a turn it cannot serve as written: %+v", tu)
			}
			for _, c := range tu.ToolCalls {
				if _, err := json.Marshal(c.Args); err != nil {
					t.Fatalf("accepted arguments that are not JSON: %v", err)
				}
			}
		}
	})
}
