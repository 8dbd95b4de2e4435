package claude

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// benchStream repeats the partial-message captures to about size bytes,
// giving each repetition its own message and tool ids so that per-id state
// (usage counting, tool calls) works as on a long real run.
func benchStream(tb testing.TB, size int) []byte {
	tb.Helper()
	var parts [][]byte
	for _, name := range []string{"partial-tool.jsonl", "partial-text.jsonl"} {
		data, err := os.ReadFile("../../testdata/claude/" + name)
		if err != nil {
			tb.Fatal(err)
		}
		parts = append(parts, data)
	}
	var out bytes.Buffer
	for i := 0; out.Len() < size; i++ {
		data := parts[i%len(parts)]
		data = bytes.ReplaceAll(data, []byte("msg_mock"), fmt.Appendf(nil, "msg_%06d_", i))
		data = bytes.ReplaceAll(data, []byte("toolu_mock"), fmt.Appendf(nil, "toolu_%06d_", i))
		out.Write(data)
	}
	return out.Bytes()
}

// BenchmarkNormalize measures a whole `harness parse` of a long Claude
// partial-message stream: parser, event.Stream and encoder to io.Discard.
func BenchmarkNormalize(b *testing.B) {
	native := benchStream(b, 20<<20)
	a := New()
	b.SetBytes(int64(len(native)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		enc := event.NewEncoder(io.Discard)
		s := event.NewStream(event.StreamConfig{Run: "run_01HARNESSTEST0000000000000",
			Start: event.SessionStart{Agent: a.Name()},
			Sink:  func(ev event.Event) { _ = enc.Encode(ev) }})
		if err := adapters.Normalize(bytes.NewReader(native), a.NewParser(), s, 0); err != nil {
			b.Fatal(err)
		}
		s.Finish(event.Outcome{NoProcess: true})
	}
}

// BenchmarkParse measures the parser alone over the same stream.
func BenchmarkParse(b *testing.B) {
	native := benchStream(b, 20<<20)
	lines := bytes.Split(native, []byte("\n"))
	b.SetBytes(int64(len(native)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p := newParser()
		var buf []event.Body
		for _, l := range lines {
			buf, _ = p.Parse(buf[:0], l)
		}
		p.Flush(buf[:0])
	}
}
