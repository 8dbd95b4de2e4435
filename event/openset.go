package event

import (
	"cmp"
	"slices"
)

// openSet holds a stream's open tool calls by their ids in the stream.
// The zero value is empty; it is not safe for concurrent use.
//
// Nearly every stream has one call open at a time, some a handful: up to
// openLinear calls are found by a search of a slice. A map of them all cost
// 800 instructions per call (to look up, add, look up and delete; an
// emptied map reseeds itself), 2 to 2.5 % of a harness parse of tool-heavy
// streams; the slice 170 (callgrind, cursor, codex and gemini streams).
// More calls than that (an agent's calls in parallel, or left open) are
// also indexed by a map, so that no stream makes this quadratic.
type openSet struct {
	calls []openCall     // in no order (see oldestFirst)
	index map[string]int // id -> position in calls; nil while few are open
}

// openLinear is how many open calls are searched without an index.
const openLinear = 8

// find returns the position of the call id in o.calls, or -1.
func (o *openSet) find(id string) int {
	if o.index != nil {
		if i, ok := o.index[id]; ok {
			return i
		}
		return -1
	}
	for i := range o.calls {
		if o.calls[i].id == id {
			return i
		}
	}
	return -1
}

// get returns the open call id.
func (o *openSet) get(id string) (openCall, bool) {
	if i := o.find(id); i >= 0 {
		return o.calls[i], true
	}
	return openCall{}, false
}

// add adds c, whose id must not be open.
func (o *openSet) add(c openCall) {
	o.calls = append(o.calls, c)
	switch {
	case o.index != nil:
		o.index[c.id] = len(o.calls) - 1
	case len(o.calls) > openLinear:
		o.index = make(map[string]int, len(o.calls))
		for i := range o.calls {
			o.index[o.calls[i].id] = i
		}
	}
}

// remove removes the call id, if it is open.
func (o *openSet) remove(id string) {
	i := o.find(id)
	if i < 0 {
		return
	}
	last := len(o.calls) - 1
	o.calls[i] = o.calls[last]
	o.calls[last] = openCall{} // pins nothing
	o.calls = o.calls[:last]
	if o.index != nil {
		delete(o.index, id)
		if i < last {
			o.index[o.calls[i].id] = i
		}
		if len(o.calls) <= openLinear/2 {
			o.index = nil // few again (not at openLinear: a count going up and down there would rebuild it each time)
		}
	}
	if cap(o.calls) > 64 && len(o.calls) <= cap(o.calls)/4 {
		o.calls = slices.Clone(o.calls) // don't keep the room of a burst of calls
	}
}

// len is the number of open calls.
func (o *openSet) len() int { return len(o.calls) }

// oldestFirst returns the open calls, oldest first.
func (o *openSet) oldestFirst() []openCall {
	out := slices.Clone(o.calls)
	slices.SortFunc(out, func(a, b openCall) int { return cmp.Compare(a.n, b.n) })
	return out
}
