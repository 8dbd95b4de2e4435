package codex

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// TestHostileLines: lines that are huge, deeply nested, cut short or not
// UTF-8, alone and in the middle of a real capture, never panic and leave
// a valid stream. Lines are accepted without full validation, so the
// parser must read damaged JSON leniently.
func TestHostileLines(t *testing.T) {
	t.Parallel()
	big := strings.Repeat(`a\\\"b\\\\`, 10<<20/8)
	deep := strings.Repeat("[", 1<<16) + strings.Repeat("{\"a\":", 1<<14)
	hostile := []string{
		`{"type":"` + big + `"}`,
		`{"type":"item.completed","item":{"type":"command_execution","aggregated_output":"` + big + `"}}`,
		`{"type":"tool_call","subtype":"completed","tool_call":` + deep + `}`,
		`{"type":"message","role":"assistant","content":` + deep + `}`,
		`{"type":"tool_use","part":{"state":` + deep + `}}`,
		`{"type":"tool_use","part":{"tool":"bash","state":{"status":"completed","input":{"command":"\xff\xfe"}}}}`,
		"{\"type\":\"\xff\",\"item\":{\"type\":\"\xc3\"}}",
		`{"type":"text","part":{"text":"x"}} garbage "type":"error"}`,
		`{"item":{"id":"a" "type":}, "type":"item.completed"}`,
		`{"message":{"content":[{"text":"x"}],},"type":"assistant"}`,
		`{}`, `{ }`, `{"`, `{"a"}`, `{"a":}`, `{:}`, `{,}`, `{"type"}`,
	}
	files, err := filepath.Glob(filepath.Join(testdata, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures in %s: %v", testdata, err)
	}
	for _, h := range hostile {
		adaptertest.Fuzz(t, New(), []byte(h))
	}
	small := hostile[5:]
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		cut := small
		for _, line := range strings.Split(string(data), "\n") {
			// Cut every line short at a few places, and close it again.
			for _, n := range []int{len(line) / 3, len(line) / 2, len(line) - 2} {
				if n > 0 && n < len(line) {
					cut = append(cut, line[:n], line[:n]+"}")
				}
			}
		}
		adaptertest.Fuzz(t, New(), append(append([]byte(strings.Join(cut, "\n")+"\n"), data...), '\n'))
	}
}

// TestBodiesOwnTheirStrings: the bodies a parser returns must not share
// the line's memory, which the caller reuses for the next line. Lines are
// parsed from one buffer scribbled over after each call; the bodies must
// come out as from fresh lines.
func TestBodiesOwnTheirStrings(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(testdata, "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		lines := strings.Split(string(data), "\n")
		want, _ := adaptertest.ParseLines(New().NewParser(), lines...)
		p := New().NewParser()
		var got []event.Body
		buf := make([]byte, 0, 1<<16)
		for _, l := range lines {
			buf = append(buf[:0], l...)
			got, _ = p.Parse(got, buf)
			for i := range buf[:cap(buf)] {
				buf[:cap(buf)][i] = 'X'
			}
		}
		got = p.Flush(got)
		wantJSON, err := json.Marshal(want)
		require.NoError(t, err)
		gotJSON, err := json.Marshal(got)
		require.NoError(t, err)
		require.Equal(t, string(wantJSON), string(gotJSON), file)
	}
}
