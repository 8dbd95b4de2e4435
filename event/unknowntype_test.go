package event

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadersSkipUnknownType: version 1 only grows, with new event types
// old readers may ignore (docs/events.md), so the readers pass over a
// well-formed line of a type they do not know and keep reading; what is
// not such a line is still an error.
func TestReadersSkipUnknownType(t *testing.T) {
	t.Parallel()
	const (
		first  = `{"v":1,"type":"session_start","run":"r","seq":1,"ts":1,"agent":"a","cwd":"/","pty":false,"argv":[]}`
		future = `{"v":1,"type":"future_thing","run":"r","seq":2,"ts":2,"what":{"x":[1]}}`
		last   = `{"v":1,"type":"result","run":"r","seq":3,"ts":3,"status":"success","text":"","duration_ms":0,"usage":{},"stats":{}}`
	)
	_, err := Decode([]byte(future))
	require.ErrorIs(t, err, ErrUnknownType)
	require.EqualError(t, err, `event: decode: unknown type "future_thing"`)

	stream := first + "\n" + future + "\n" + last + "\n"
	types := func(evs []Event) (out []Type) {
		for _, ev := range evs {
			out = append(out, ev.Type)
		}
		return out
	}
	want := []Type{TypeSessionStart, TypeResult}
	evs, err := ReadAll(strings.NewReader(stream))
	require.NoError(t, err)
	require.Equal(t, want, types(evs))
	evs, cut, err := ReadLog(strings.NewReader(stream))
	require.NoError(t, err)
	require.False(t, cut)
	require.Equal(t, want, types(evs))
	var scanned []Event
	cut, err = ScanLog(strings.NewReader(stream), func(ev Event) error { scanned = append(scanned, ev); return nil })
	require.NoError(t, err)
	require.False(t, cut)
	require.Equal(t, want, types(scanned))
	// A last line of a future type without its newline is a whole line
	// too: skipped, not a cut.
	evs, cut, err = ReadLog(strings.NewReader(first + "\n" + future))
	require.NoError(t, err)
	require.False(t, cut)
	require.Equal(t, want[:1], types(evs))

	// The validator still reports it: a harness of this version writes
	// no such type.
	require.ErrorContains(t, CheckNDJSON([]byte(stream)), `line 2: event: decode: unknown type "future_thing"`)

	// Still errors: what is not a well-formed line of version 1.
	for _, bad := range []string{
		`{"v":1,"type":"future_thing","run":"r","seq":2,"ts":2`,         // malformed JSON
		`{"v":1,"type":"future_thing","run":"r","seq":"2","ts":2}`,      // an envelope field of the wrong type
		`{"type":"future_thing","run":"r","seq":2,"ts":2}`,              // no version
		`{"v":2,"type":"future_thing","run":"r","seq":2,"ts":2}`,        // another version
		`{"v":"1","type":"future_thing","run":"r","seq":2,"ts":2}`,      // an invalid version
		`{"v":1,"run":"r","seq":2,"ts":2}`,                              // no type
		`{"v":1,"type":"text_delta","run":"r","seq":2,"ts":2,"text":5}`, // a known type, malformed
		// A known type of another version, or of none: a later version
		// may give it other fields or meanings; read as v1, it was
		// exported (sessions export) as if it were one.
		`{"v":2,"type":"message","run":"r","seq":2,"ts":2,"role":"assistant","text":"hi"}`,
		`{"type":"message","run":"r","seq":2,"ts":2,"role":"assistant","text":"hi"}`,
		`{"v":0,"type":"message","run":"r","seq":2,"ts":2,"role":"assistant","text":"hi"}`,
	} {
		_, err := Decode([]byte(bad))
		require.Error(t, err, bad)
		require.False(t, errors.Is(err, ErrUnknownType), bad)
		_, err = ReadAll(strings.NewReader(first + "\n" + bad + "\n" + last + "\n"))
		require.ErrorContains(t, err, "line 2: ", bad)
		_, _, err = ReadLog(bytes.NewReader([]byte(first + "\n" + bad + "\n" + last + "\n")))
		require.ErrorContains(t, err, "line 2: ", bad)
	}
}
