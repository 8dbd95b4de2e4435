package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRewardOutOfRange: a reward the verifier wrote that is no finite
// number in 0..1 is said to be so, in reward.json as in reward.txt.
// Before, {"reward": 1e400} (past float64's range; Python's json writes
// 10**400 so) was "not a JSON object", as were Python's NaN and
// Infinity (which its json module writes for such floats) and JSON that
// does not parse; reward.txt's 1e400 was "not a number". A number out
// of range beside the reward is left out of the rewards.
func TestRewardOutOfRange(t *testing.T) {
	cases := []struct {
		name, json, txt string
		reward          float64 // when want is ""
		rewards         map[string]float64
		want            string // the error, when there is one
	}{
		{name: "huge", json: `{"reward": 1e400}`, want: `reward.json: "reward" 1e400 is out of range: want 0 to 1`},
		{name: "huge negative", json: `{"reward": -1e400}`, want: `reward.json: "reward" -1e400 is out of range: want 0 to 1`},
		{name: "tiny", json: `{"reward": 1e-400}`, reward: 0, rewards: map[string]float64{"reward": 0}},
		{name: "negative", json: `{"reward": -0.5}`, want: "reward -0.5: want 0 to 1"},
		{name: "above one", json: `{"reward": 2}`, want: "reward 2: want 0 to 1"},
		{name: "python nan", json: `{"reward": NaN}`, want: "reward.json: not valid JSON: NaN or Infinity, not a finite number: want 0 to 1"},
		{name: "python infinity", json: `{"reward": -Infinity, "x": 1}`, want: "reward.json: not valid JSON: NaN or Infinity, not a finite number: want 0 to 1"},
		{name: "not json", json: `reward: 1`, want: "reward.json: not valid JSON"},
		{name: "not an object", json: `[1]`, want: "reward.json: not a JSON object"},
		{name: "python big int", json: `{"reward": 1` + strings.Repeat("0", 400) + `}`, want: `reward.json: "reward" 10000000000000000000000000000000… is out of range`},
		{name: "other number huge", json: `{"reward": 1, "loss": 1e400, "n": 3}`, reward: 1, rewards: map[string]float64{"reward": 1, "n": 3}},
		{name: "txt huge", txt: "1e400\n", want: "reward.txt: 1e400 is out of range: want 0 to 1"},
		{name: "txt nan", txt: "nan", want: "reward NaN: want 0 to 1"},
		{name: "txt word", txt: "one", want: `reward.txt: "one" is not a number`},
		{name: "txt ok", txt: "0.5\n", reward: 0.5},
		// Read as Python's float() reads it (Harbor's verifier).
		{name: "txt hex", txt: "0x1p-1", want: `reward.txt: "0x1p-1" is not a number`},
		{name: "txt digit separator", txt: "0.2_5", reward: 0.25},
		{name: "txt separator at the end", txt: "0.5_", want: `reward.txt: "0.5_" is not a number`},
		{name: "txt separator after the point", txt: "0._5", want: `reward.txt: "0._5" is not a number`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &harborRun{dir: t.TempDir()}
			v := filepath.Join(r.p("logs"), "verifier")
			require.NoError(t, os.MkdirAll(v, 0o755))
			if c.json != "" {
				require.NoError(t, os.WriteFile(filepath.Join(v, "reward.json"), []byte(c.json), 0o644))
			}
			if c.txt != "" {
				require.NoError(t, os.WriteFile(filepath.Join(v, "reward.txt"), []byte(c.txt), 0o644))
			}
			rewards, reward, err := r.reward()
			if c.want != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), c.want)
				require.Nil(t, reward)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, reward)
			require.Equal(t, c.reward, *reward)
			require.Equal(t, c.rewards, rewards)
		})
	}
}
