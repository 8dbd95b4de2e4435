package serve

import (
	"testing"
)

// FuzzScan: the summary of a log never panics on a line, whatever it
// holds (a log may be torn, hand-edited or of a future version).
func FuzzScan(f *testing.F) {
	f.Add([]byte(`{"v":1,"type":"result","run":"r","seq":9,"ts":5,"status":"success","text":"héllo","usage":{"input_tokens":3},"cost_usd":0.1,"exit_code":0}`))
	f.Add([]byte(`{"v":1,"type":"tool_start","run":"r","seq":2,"kind":"shell"}`))
	f.Add([]byte(`{"type":"usage","input_tokens":"x"}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var sc scan
		sc.add(line)
		sc.add(line)
		_ = cut(string(line), 3)
	})
}

func TestCut(t *testing.T) {
	for in, want := range map[string]string{"abc": "abc", "abcdef": "abcd…", "ééé": "éé…", "aéé": "aé…"} {
		if got := cut(in, 4); got != want {
			t.Errorf("cut(%q, 4) = %q, want %q", in, got, want)
		}
	}
}
