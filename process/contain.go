package process

import (
	"sync"
	"sync/atomic"
)

// live is every run of this program from its spawn to the end of its
// sweep: what ContainPanic ends before a panic takes the program down.
var live struct {
	sync.Mutex
	procs map[*Proc]struct{}
}

func addLive(p *Proc) {
	live.Lock()
	defer live.Unlock()
	if live.procs == nil {
		live.procs = map[*Proc]struct{}{}
	}
	live.procs[p] = struct{}{}
}

func dropLive(p *Proc) {
	live.Lock()
	defer live.Unlock()
	delete(live.procs, p)
}

// ContainPanic, deferred by a goroutine of harness's own that runs a
// caller's callback (the lines of a run to its events, a warning, a
// session's timer), ends every run of this program when that callback
// panics, and then panics again with what it recovered: the program
// still dies of the panic, with its trace, but leaves no process behind.
// Without it the agents would die with the program (Pdeathsig), but what
// they started would live on: re-parented to init, or in a run's cgroup
// until a later harness ends it. A panic on a goroutine of the caller's
// is the caller's to recover, and ends nothing.
func ContainPanic() {
	v := recover()
	if v == nil {
		return
	}
	dying.Store(true)
	EndAll()
	panic(v)
}

// dying is set once a callback's panic is being contained: the runs it
// kills then never end (finish), or the caller's Wait would return while
// the panic is still on its way up and the program could exit with its
// own status instead of dying of the panic.
var dying atomic.Bool

// EndAll kills every process of every run of this program, at once, and
// returns when they are killed: for a program about to die another way
// than by its runs' ends (a panic: ContainPanic; SIGQUIT, whose default
// action exits without them). The runs' own ends then find nothing left.
func EndAll() {
	live.Lock()
	procs := make([]*Proc, 0, len(live.procs))
	for p := range live.procs {
		procs = append(procs, p)
	}
	live.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(p.killAtOnce)
	}
	wg.Wait()
}
