package logger

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
)

// Index lists a session directory as List does, for a caller that lists
// it again and again (a server's run list): it reads the directory only
// when its modification time changed, and a run's meta only until the
// meta is final. A final meta (stored, and no longer running) is never
// rewritten: Close writes it once, and a log is never overwritten. A
// running one is read again each time, so a run's end, and the loss of
// its harness, are seen at once. A meta file that is no meta of its run
// (malformed, too large) is read again only once it changed. An Index is
// safe for concurrent use.
type Index struct {
	dir string
	now func() time.Time

	mu     sync.Mutex
	dirMod time.Time
	ids    []string
	metas  map[string]indexed
	sorted []Meta
	dirty  bool
}

type indexed struct {
	meta  Meta
	final bool
	bad   os.FileInfo // the meta file, when it was no meta of the run
	why   *MetaError  // why meta is made up, nil when it is the file's
}

// dirSettle is how long after its last change a directory is read again
// whatever its modification time says: a file system with coarse times
// (a second or two) may show two changes with one time.
const dirSettle = 2 * time.Second

// NewIndex returns an Index of dir.
func NewIndex(dir string) *Index {
	return &Index{dir: dir, now: time.Now, metas: map[string]indexed{}}
}

// List returns what List(dir) would, newest first. The slice is shared:
// callers must not modify it.
func (x *Index) List() ([]Meta, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.list()
}

// ListChecked is List, and also says, by run id, why each meta that is
// made up rather than read from its file is made up (as ListChecked(dir)
// does). The map is the caller's; it reads no more than List.
func (x *Index) ListChecked() ([]Meta, map[string]*MetaError, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	metas, err := x.list()
	if err != nil {
		return nil, nil, err
	}
	var whys map[string]*MetaError
	for _, id := range x.ids {
		if why := x.metas[id].why; why != nil {
			if whys == nil {
				whys = make(map[string]*MetaError)
			}
			whys[id] = why
		}
	}
	return metas, whys, nil
}

func (x *Index) list() ([]Meta, error) {
	st, err := os.Stat(x.dir)
	switch {
	case err != nil && os.IsNotExist(err):
		x.ids, x.dirMod, x.sorted, x.dirty = nil, time.Time{}, nil, false
		clear(x.metas)
		return nil, nil
	case err != nil:
		return nil, err
	case !st.ModTime().Equal(x.dirMod) || x.now().Sub(st.ModTime()) < dirSettle || x.ids == nil:
		ids, err := runIDs(x.dir)
		if err != nil {
			return nil, err
		}
		if len(ids) != len(x.ids) || !sameIDs(ids, x.metas) {
			x.dirty = true
		}
		x.ids, x.dirMod = ids, st.ModTime()
		if len(x.metas) > len(ids) { // runs pruned: forget them
			keep := make(map[string]bool, len(ids))
			for _, id := range ids {
				keep[id] = true
			}
			for id := range x.metas {
				if !keep[id] {
					delete(x.metas, id)
				}
			}
		}
	}
	var changed map[string]Meta // metas read again that differ, same start
	for _, id := range x.ids {
		old, ok := x.metas[id]
		if ok && old.final {
			continue
		}
		var m Meta
		bad, why := old.bad, old.why
		if bad != nil && x.unchanged(Path(x.dir, id, ExtMeta), bad) {
			m = madeUpMeta(x.dir, id)
		} else {
			m, why, bad = readMetaWhy(x.dir, id)
		}
		stored := why == nil
		m, settled := settle(x.dir, m, stored)
		switch {
		case !ok || !old.meta.Start.Equal(m.Start):
			x.dirty = true // a new place in the order
		case !reflect.DeepEqual(old.meta, m):
			if changed == nil {
				changed = map[string]Meta{}
			}
			changed[id] = m
		}
		// A meta settled from its log is final only once no harness is
		// left to rewrite it (Close, right after the result).
		final := stored && m.Status != StatusRunning && m.Status != StatusLost && (!settled || m.Harness.Gone())
		x.metas[id] = indexed{meta: m, final: final, bad: bad, why: why}
	}
	switch {
	case x.dirty || x.sorted == nil:
		out := make([]Meta, 0, len(x.ids))
		for _, id := range x.ids {
			out = append(out, x.metas[id].meta)
		}
		sortMetas(out)
		x.sorted, x.dirty = out, false
	case changed != nil:
		// Callers may still hold the old slice: change a copy.
		out := slices.Clone(x.sorted)
		for i := range out {
			if m, ok := changed[out[i].Run]; ok {
				out[i] = m
			}
		}
		x.sorted = out
	}
	return x.sorted, nil
}

// unchanged reports whether path still names the file was describes, as
// it was: same file, size and modification time, that time older than
// dirSettle (a write may leave a coarse time as it was).
func (x *Index) unchanged(path string, was os.FileInfo) bool {
	fi, err := os.Stat(path)
	return err == nil && os.SameFile(fi, was) && fi.Size() == was.Size() &&
		fi.ModTime().Equal(was.ModTime()) && x.now().Sub(fi.ModTime()) >= dirSettle
}

func sameIDs(ids []string, metas map[string]indexed) bool {
	for _, id := range ids {
		if _, ok := metas[id]; !ok {
			return false
		}
	}
	return true
}

func sortMetas(out []Meta) {
	slices.SortFunc(out, func(a, b Meta) int {
		if c := b.Start.Compare(a.Start); c != 0 {
			return c
		}
		return strings.Compare(b.Run, a.Run)
	})
}
