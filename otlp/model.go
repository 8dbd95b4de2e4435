// Package otlp turns a run's unified event stream into OpenTelemetry
// traces and metrics, in the shape of the OpenTelemetry GenAI semantic
// conventions (open-telemetry/semantic-conventions-genai v0.1.0), and
// exports them over OTLP/HTTP (docs/otlp.md).
//
// It encodes OTLP itself, binary protobuf for the wire and JSON for files
// (harness sessions export --format otlp-json), instead of linking the
// OpenTelemetry Go SDK: the SDK's OTLP/HTTP exporters link gRPC and every
// protobuf descriptor of OTLP, whose package initialization would run at
// every start of harness whether telemetry is on or not (about 1,500
// allocations and 80 packages, measured with GODEBUG=inittrace=1). This
// package has no init work and allocates nothing until a run is exported.
package otlp

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/agentharness/harness/event"
)

// TraceID and SpanID are W3C trace context ids; the zero value is none.
type (
	TraceID [16]byte
	SpanID  [8]byte
)

// IsZero reports whether id is none.
func (id TraceID) IsZero() bool { return id == TraceID{} }

// IsZero reports whether id is none.
func (id SpanID) IsZero() bool { return id == SpanID{} }

func (id TraceID) String() string { return hex.EncodeToString(id[:]) }
func (id SpanID) String() string  { return hex.EncodeToString(id[:]) }

// MarshalJSON writes the id as OTLP/JSON does: lowercase hex, "" for none.
func (id TraceID) MarshalJSON() ([]byte, error) { return hexJSON(id[:], id.IsZero()), nil }

// MarshalJSON writes the id as OTLP/JSON does: lowercase hex, "" for none.
func (id SpanID) MarshalJSON() ([]byte, error) { return hexJSON(id[:], id.IsZero()), nil }

func hexJSON(b []byte, zero bool) []byte {
	if zero {
		return []byte(`""`)
	}
	out := make([]byte, 0, 2*len(b)+2)
	out = append(out, '"')
	out = hex.AppendEncode(out, b)
	return append(out, '"')
}

// Span kinds and status codes of OTLP.
const (
	KindInternal = 1
	KindClient   = 3

	StatusUnset = 0
	StatusError = 2
)

// Nanos is a time in Unix nanoseconds, a string in OTLP/JSON.
type Nanos uint64

func (n Nanos) MarshalJSON() ([]byte, error) {
	return strconv.AppendQuote(nil, strconv.FormatUint(uint64(n), 10)), nil
}

// Value is an attribute value: a string, an int64, a float64 or a bool.
// It holds them unboxed (no interface): a span's attributes cost one
// slice, not an allocation each.
type Value struct {
	kind valueKind
	s    string
	n    uint64 // int64, float64 bits, bool 0/1
}

type valueKind uint8

const (
	kindNone valueKind = iota
	kindStr
	kindInt
	kindFloat
	kindBool
)

// KeyValue is one attribute.
type KeyValue struct {
	Key   string `json:"key"`
	Value Value  `json:"value"`
}

// maxValueBytes bounds a string attribute's value, as the SDKs' attribute
// value length limit (OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT) does: the bound
// of the stream's texts, so that what harness's stream carries goes
// whole, and a library caller's text of hundreds of MiB does not make a
// span of that size.
const maxValueBytes = event.MaxTextBytes

// Str, Int, Float and Bool make attributes. A string longer than
// maxValueBytes is cut to it, at a rune boundary.
func Str(k, v string) KeyValue       { return KeyValue{k, Value{kind: kindStr, s: capValue(v)}} }
func Int(k string, v int64) KeyValue { return KeyValue{k, Value{kind: kindInt, n: uint64(v)}} }
func Float(k string, v float64) KeyValue {
	return KeyValue{k, Value{kind: kindFloat, n: math.Float64bits(v)}}
}
func Bool(k string, v bool) KeyValue {
	n := uint64(0)
	if v {
		n = 1
	}
	return KeyValue{k, Value{kind: kindBool, n: n}}
}

// capValue is s within maxValueBytes: a copy of its head when cut, so
// that the whole is not kept alive by the span.
func capValue(s string) string {
	if len(s) <= maxValueBytes {
		return s
	}
	head, _ := event.Cut(s, maxValueBytes)
	return strings.Clone(head)
}

// Get returns the value as a Go value (string, int64, float64, bool).
func (v Value) Get() any {
	switch v.kind {
	case kindStr:
		return v.s
	case kindInt:
		return int64(v.n)
	case kindFloat:
		return math.Float64frombits(v.n)
	case kindBool:
		return v.n == 1
	}
	return nil
}

func (v Value) MarshalJSON() ([]byte, error) {
	switch v.kind {
	case kindStr:
		return json.Marshal(map[string]string{"stringValue": v.s})
	case kindInt:
		return json.Marshal(map[string]string{"intValue": strconv.FormatInt(int64(v.n), 10)})
	case kindFloat:
		return json.Marshal(map[string]float64{"doubleValue": math.Float64frombits(v.n)})
	case kindBool:
		return json.Marshal(map[string]bool{"boolValue": v.n == 1})
	}
	return []byte("{}"), nil
}

// Span is one finished span.
type Span struct {
	TraceID      TraceID `json:"traceId"`
	SpanID       SpanID  `json:"spanId"`
	ParentSpanID SpanID  `json:"parentSpanId"` // zero: a root
	Name         string  `json:"name"`
	Kind         int     `json:"kind"` // KindInternal, KindClient
	// Start and End are Unix nanoseconds; an unended span has End 0.
	Start      Nanos       `json:"startTimeUnixNano"`
	End        Nanos       `json:"endTimeUnixNano"`
	Attributes []KeyValue  `json:"attributes,omitempty"`
	Events     []SpanEvent `json:"events,omitempty"`
	// DroppedEvents counts the events left out past maxSpanEvents.
	DroppedEvents uint32     `json:"droppedEventsCount,omitempty"`
	Status        SpanStatus `json:"status"`
	Flags         uint32     `json:"flags,omitempty"`
}

// SpanEvent is a timed note on a span (a watchdog warning, an error).
type SpanEvent struct {
	Time       Nanos      `json:"timeUnixNano"`
	Name       string     `json:"name"`
	Attributes []KeyValue `json:"attributes,omitempty"`
}

// SpanStatus is a span's outcome.
type SpanStatus struct {
	Message string `json:"message,omitempty"`
	Code    int    `json:"code,omitempty"`
}

// Scope names the instrumentation: harness, its version.
type Scope struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// Traces is an ExportTraceServiceRequest of one resource and one scope.
type Traces struct {
	Resource []KeyValue
	Scope    Scope
	Spans    []Span
}

// MarshalJSON writes t as OTLP/JSON (the file format of the OTLP
// exporters and of the collector's file exporter).
func (t Traces) MarshalJSON() ([]byte, error) {
	type scopeSpans struct {
		Scope Scope  `json:"scope"`
		Spans []Span `json:"spans"`
	}
	type resourceSpans struct {
		Resource   resourceJSON `json:"resource"`
		ScopeSpans []scopeSpans `json:"scopeSpans"`
	}
	return json.Marshal(struct {
		ResourceSpans []resourceSpans `json:"resourceSpans"`
	}{[]resourceSpans{{resourceJSON{t.Resource}, []scopeSpans{{t.Scope, t.Spans}}}}})
}

type resourceJSON struct {
	Attributes []KeyValue `json:"attributes"`
}

// Protobuf is t as a binary ExportTraceServiceRequest.
func (t Traces) Protobuf() []byte {
	b, req, ss := beginTraces(make([]byte, 0, 256*len(t.Spans)+256), t.Resource, t.Scope)
	for i := range t.Spans {
		b = appendSpanMessage(b, &t.Spans[i])
	}
	return endTraces(b, req, ss)
}

// beginTraces appends the head of an ExportTraceServiceRequest of one
// resource and scope: its spans follow (appendSpanMessage), and
// endTraces writes the lengths that enclose them. The exporter encodes
// each span as it ends, straight into the request it will be sent in.
func beginTraces(b []byte, resource []KeyValue, scope Scope) (out []byte, req, ss int) {
	b, req = begin(b, 1) // resource_spans
	b, res := begin(b, 1)
	b = end(appendAttrs(b, 1, resource), res)
	b, ss = begin(b, 2) // scope_spans
	b, sc := begin(b, 1)
	return end(appendScope(b, scope), sc), req, ss
}

func endTraces(b []byte, req, ss int) []byte { return end(end(b, ss), req) }

// appendSpanMessage appends s as a span of the scope_spans beginTraces began.
func appendSpanMessage(b []byte, s *Span) []byte {
	b, sp := begin(b, 2)
	return end(appendSpan(b, s), sp)
}

func appendScope(b []byte, s Scope) []byte {
	b = appendString(b, 1, s.Name)
	return appendString(b, 2, s.Version)
}

func appendSpan(b []byte, s *Span) []byte {
	b = appendBytes(b, 1, s.TraceID[:])
	b = appendBytes(b, 2, s.SpanID[:])
	if !s.ParentSpanID.IsZero() {
		b = appendBytes(b, 4, s.ParentSpanID[:])
	}
	b = appendString(b, 5, s.Name)
	b = appendVarintField(b, 6, uint64(s.Kind))
	b = appendFixed64(b, 7, uint64(s.Start))
	b = appendFixed64(b, 8, uint64(s.End))
	b = appendAttrs(b, 9, s.Attributes)
	for _, e := range s.Events {
		var ev int
		b, ev = begin(b, 11)
		b = appendFixed64(b, 1, uint64(e.Time))
		b = appendString(b, 2, e.Name)
		b = end(appendAttrs(b, 3, e.Attributes), ev)
	}
	b = appendVarintField(b, 12, uint64(s.DroppedEvents))
	b, st := begin(b, 15)
	b = appendString(b, 2, s.Status.Message)
	b = end(appendVarintField(b, 3, uint64(s.Status.Code)), st)
	if s.Flags != 0 {
		b = binary.AppendUvarint(b, 16<<3|5)
		b = binary.LittleEndian.AppendUint32(b, s.Flags)
	}
	return b
}

// appendAttrs appends each attribute as a KeyValue field num. An
// attribute's lengths are known before it is written, so they are
// written exactly (not padded, as begin's are): most attributes are a
// few dozen bytes, and a padded length would be a tenth of them.
func appendAttrs(b []byte, num int, kvs []KeyValue) []byte {
	for i := range kvs {
		kv := &kvs[i]
		if kv.Value.kind == kindStr && num < 16 {
			// Most attributes: a string value, every length a byte.
			key, n := len(kv.Key), len(kv.Value.s)
			if m := 2 + key + 4 + n; m < 128 {
				b = append(b, byte(num<<3|2), byte(m), 1<<3|2, byte(key))
				b = append(b, kv.Key...)
				b = append(b, 2<<3|2, byte(2+n), 1<<3|2, byte(n))
				b = append(b, kv.Value.s...)
				continue
			}
		}
		v := anyValueLen(kv.Value)
		key := len(kv.Key)
		m := 1 + uvarintLen(uint64(key)) + key + 1 + uvarintLen(uint64(v)) + v
		b = binary.AppendUvarint(b, uint64(num)<<3|2)
		b = binary.AppendUvarint(b, uint64(m))
		b = appendBytesString(b, 1, kv.Key) // present even when "": m counts it
		b = binary.AppendUvarint(b, 2<<3|2)
		b = binary.AppendUvarint(b, uint64(v))
		b = appendAnyValue(b, kv.Value)
	}
	return b
}

// anyValueLen is the length of v's AnyValue message (appendAnyValue).
func anyValueLen(v Value) int {
	switch v.kind {
	case kindStr:
		return 1 + uvarintLen(uint64(len(v.s))) + len(v.s)
	case kindBool, kindInt:
		return 1 + uvarintLen(v.n)
	case kindFloat:
		return 1 + 8
	}
	return 0
}

// uvarintLen is the length of v as a varint.
func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

func appendAnyValue(b []byte, v Value) []byte {
	switch v.kind {
	case kindStr:
		b = binary.AppendUvarint(b, 1<<3|2)
		b = binary.AppendUvarint(b, uint64(len(v.s)))
		return append(b, v.s...)
	case kindBool:
		return appendVarintAlways(b, 2, v.n)
	case kindInt:
		return appendVarintAlways(b, 3, v.n)
	case kindFloat:
		b = binary.AppendUvarint(b, 4<<3|1)
		return binary.LittleEndian.AppendUint64(b, v.n)
	}
	return b
}

// The protobuf wire format, as much of it as OTLP needs. Scalar fields at
// their zero value are left out, as proto3 does; messages are always
// written (an empty one is present, not absent).

// begin appends the tag of message field num and room for its length,
// and returns where its content starts; end writes the length there. The
// length is a varint padded to 4 bytes (protobuf parsers take a varint of
// any length up to 10 bytes): a message is written in place, once,
// instead of being built apart and copied into its parent at every
// level. A message of 256 MiB or more (a library caller's span, far past
// a batch) takes a longer length, for which end moves its content up.
func begin(b []byte, num int) ([]byte, int) {
	b = binary.AppendUvarint(b, uint64(num)<<3|2)
	b = append(b, 0x80, 0x80, 0x80, 0)
	return b, len(b)
}

func end(b []byte, start int) []byte {
	n := len(b) - start
	if n >= 1<<28 {
		var length [binary.MaxVarintLen64]byte
		k := binary.PutUvarint(length[:], uint64(n))
		b = append(b, length[4:k]...) // room for the length's k-4 more bytes
		copy(b[start+k-4:], b[start:start+n])
		copy(b[start-4:], length[:k])
		return b
	}
	b[start-4] = byte(n) | 0x80
	b[start-3] = byte(n>>7) | 0x80
	b[start-2] = byte(n>>14) | 0x80
	b[start-1] = byte(n>>21) & 0x7f
	return b
}

func appendString(b []byte, num int, s string) []byte {
	if s == "" {
		return b
	}
	b = binary.AppendUvarint(b, uint64(num)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendBytesString appends s as field num, even when it is "".
func appendBytesString(b []byte, num int, s string) []byte {
	b = binary.AppendUvarint(b, uint64(num)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b []byte, num int, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(num)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

func appendVarintField(b []byte, num int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return appendVarintAlways(b, num, v)
}

// appendVarintAlways writes a varint even when zero: a oneof member (an
// attribute's value) is present at zero.
func appendVarintAlways(b []byte, num int, v uint64) []byte {
	b = binary.AppendUvarint(b, uint64(num)<<3)
	return binary.AppendUvarint(b, v)
}

func appendFixed64(b []byte, num int, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = binary.AppendUvarint(b, uint64(num)<<3|1)
	return binary.LittleEndian.AppendUint64(b, v)
}

func appendDouble(b []byte, num int, v float64) []byte {
	b = binary.AppendUvarint(b, uint64(num)<<3|1)
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}

// Metrics is an ExportMetricsServiceRequest of one resource and one
// scope, cumulative: each point counts from its Start.
type Metrics struct {
	Resource []KeyValue
	Scope    Scope
	Metrics  []Metric
}

// Metric is a histogram or a monotonic sum.
type Metric struct {
	Name, Description, Unit string
	Histogram               []HistogramPoint
	Sum                     []SumPoint
}

// HistogramPoint is one attribute set's explicit-bucket histogram.
type HistogramPoint struct {
	Attributes    []KeyValue
	Start, Time   Nanos
	Count         uint64
	Sum, Min, Max float64
	Bounds        []float64
	Buckets       []uint64 // len(Bounds)+1
}

// SumPoint is one attribute set's count.
type SumPoint struct {
	Attributes  []KeyValue
	Start, Time Nanos
	Value       int64
}

const temporalityCumulative = 2

// Protobuf is m as a binary ExportMetricsServiceRequest.
func (m Metrics) Protobuf() []byte {
	b, req := begin(nil, 1) // resource_metrics
	b, res := begin(b, 1)
	b = end(appendAttrs(b, 1, m.Resource), res)
	b, sm := begin(b, 2) // scope_metrics
	b, sc := begin(b, 1)
	b = end(appendScope(b, m.Scope), sc)
	for _, mt := range m.Metrics {
		var mb int
		b, mb = begin(b, 2)
		b = appendString(b, 1, mt.Name)
		b = appendString(b, 2, mt.Description)
		b = appendString(b, 3, mt.Unit)
		if mt.Histogram != nil {
			var h int
			b, h = begin(b, 9)
			for _, p := range mt.Histogram {
				var pb int
				b, pb = begin(b, 1)
				b = end(appendHistogramPoint(b, p), pb)
			}
			b = end(appendVarintField(b, 2, temporalityCumulative), h)
		} else {
			var sum int
			b, sum = begin(b, 7)
			for _, p := range mt.Sum {
				var pb int
				b, pb = begin(b, 1)
				b = appendFixed64(b, 2, uint64(p.Start))
				b = appendFixed64(b, 3, uint64(p.Time))
				b = binary.AppendUvarint(b, 6<<3|1) // as_int, sfixed64
				b = binary.LittleEndian.AppendUint64(b, uint64(p.Value))
				b = end(appendAttrs(b, 7, p.Attributes), pb)
			}
			b = appendVarintField(b, 2, temporalityCumulative)
			b = end(appendVarintField(b, 3, 1), sum) // is_monotonic
		}
		b = end(b, mb)
	}
	return end(end(b, sm), req)
}

func appendHistogramPoint(b []byte, p HistogramPoint) []byte {
	b = appendFixed64(b, 2, uint64(p.Start))
	b = appendFixed64(b, 3, uint64(p.Time))
	b = binary.AppendUvarint(b, 4<<3|1)
	b = binary.LittleEndian.AppendUint64(b, p.Count)
	b = appendDouble(b, 5, p.Sum)
	var counts []byte
	for _, c := range p.Buckets {
		counts = binary.LittleEndian.AppendUint64(counts, c)
	}
	b = appendBytes(b, 6, counts) // packed fixed64
	var bounds []byte
	for _, f := range p.Bounds {
		bounds = binary.LittleEndian.AppendUint64(bounds, math.Float64bits(f))
	}
	b = appendBytes(b, 7, bounds) // packed double
	b = appendAttrs(b, 9, p.Attributes)
	b = appendDouble(b, 11, p.Min)
	return appendDouble(b, 12, p.Max)
}
