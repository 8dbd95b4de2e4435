//go:build linux

package logger

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// These tests need Linux: inotify's wake-up, its seams, and /proc's list
// of open descriptors. Elsewhere the follower polls (watch_other.go).

// TestFollowWakesOnWrite: a log another process appends to (no hook in
// this one) reaches its follower when the kernel reports the write, not
// at the next poll: with a poll of an hour, every line still arrives.
func TestFollowWakesOnWrite(t *testing.T) {
	require.Equal(t, upTo(5), followWriting(t, newLogFile(t, "run_w"), time.Hour))
}

// TestFollowWithoutNotifications: where the kernel gives no watch (its
// instances or watches used up), the follower polls and misses nothing.
func TestFollowWithoutNotifications(t *testing.T) {
	for _, c := range []struct {
		name string
		init func(int) (int, error)
		add  func(int, string, uint32) (int, error)
	}{
		{"no-instance-left", func(int) (int, error) { return -1, unix.EMFILE }, inotifyAddWatch},
		{"no-watch-left", inotifyInit, func(int, string, uint32) (int, error) { return -1, unix.ENOSPC }},
	} {
		t.Run(c.name, func(t *testing.T) {
			tried := make(chan struct{}, 1)
			defer func(i func(int) (int, error), a func(int, string, uint32) (int, error)) {
				inotifyInit, inotifyAddWatch = i, a
			}(inotifyInit, inotifyAddWatch)
			inotifyInit = func(flags int) (int, error) {
				select {
				case tried <- struct{}{}:
				default:
				}
				return c.init(flags)
			}
			inotifyAddWatch = c.add
			require.Equal(t, upTo(5), followWriting(t, newLogFile(t, "run_p"), time.Millisecond))
			require.Len(t, tried, 1, "the follower asked for a watch first")
		})
	}
}

// openFDs counts this process's descriptors open on path.
func openFDs(t *testing.T, path string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		if p, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && p == path {
			n++
		}
	}
	return n
}

// TestFollowersShareOneReader: followers of one log, once caught up, are
// served by one reader of the file (one descriptor open on it, not one
// each), and each gets every line once, in order, to the result.
func TestFollowersShareOneReader(t *testing.T) {
	const followers = 3
	l := newLogFile(t, "run_s")
	l.write(t, 1, 3, false)
	var fs Feeds
	caught := make(chan struct{})
	got := make([]seqsOf, followers)
	errs := make(chan error, followers)
	for i := range followers {
		first := true
		go func() {
			errs <- fs.Follow(deadline(t), l.dir, l.run, FollowOptions{Poll: time.Hour, Ended: never,
				CaughtUp: func() error {
					if first {
						first = false
						caught <- struct{}{}
					}
					return nil
				}}, func(seq int64, _ []byte) error { got[i].add(seq); return nil })
		}()
		<-caught // one at a time, so that the first starts the feed
	}
	require.Equal(t, 2, openFDs(t, l.path), "the writer's and the feed's, not one each follower")
	l.write(t, 4, 200, true)
	for range followers {
		require.NoError(t, <-errs)
	}
	requireEach(t, 200, &got[0], &got[1], &got[2])
	require.Equal(t, 1, openFDs(t, l.path), "the feed closed the file; the writer's is left")
}
