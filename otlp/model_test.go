package otlp

import (
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestAttrLengths: attributes are written with exact lengths, so the
// collector's decoder reads back every kind of value, the empty key and
// strings whose lengths cross each varint size.
func TestAttrLengths(t *testing.T) {
	want := map[string]any{"": "empty key", "i": int64(-1), "z": int64(0), "f": 0.5, "b": true, "no": false}
	for _, n := range []int{0, 1, 115, 116, 127, 128, 16371, 16372, 16383, 16384, 2097152} {
		want[strings.Repeat("k", n%200+1)+"_"+strings.Repeat("v", 1)] = nil // keys of many lengths too
		want["s"+strings.Repeat("k", n%300)] = strings.Repeat("v", n)
	}
	for n := 112; n < 126; n++ { // a short key: the attribute's length crosses 127 here
		want[fmt.Sprint("x", n)] = strings.Repeat("v", n)
	}
	var attrs []KeyValue
	for k, v := range want {
		switch v := v.(type) {
		case string: // past Str's cap: the encoder's lengths, whatever their size
			attrs = append(attrs, KeyValue{k, Value{kind: kindStr, s: v}})
		case int64:
			attrs = append(attrs, Int(k, v))
		case float64:
			attrs = append(attrs, Float(k, v))
		case bool:
			attrs = append(attrs, Bool(k, v))
		case nil:
			attrs = append(attrs, Int(k, int64(len(k))<<40))
			want[k] = int64(len(k)) << 40
		}
	}
	body := Traces{Resource: attrs, Spans: []Span{{TraceID: TraceID{1}, SpanID: SpanID{1}, Name: "s", Attributes: attrs}}}.Protobuf()
	tr, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(body)
	if err != nil {
		t.Fatal(err)
	}
	rs := tr.ResourceSpans().At(0)
	for name, got := range map[string]map[string]any{"resource": attrMap(rs.Resource().Attributes()),
		"span": attrMap(rs.ScopeSpans().At(0).Spans().At(0).Attributes())} {
		if len(got) != len(want) {
			t.Errorf("%s: %d attributes, want %d", name, len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %.20q = %.20v, want %.20v", name, k, got[k], v)
			}
		}
	}
}
