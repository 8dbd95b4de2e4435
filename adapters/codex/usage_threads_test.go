package codex

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// TestAppServerUsageThreadsBounded: the running totals kept per thread
// are bounded (a new thread takes the place of the one heard from least
// recently), however many threads report on the connection: a Codex that
// names a new thread in each notification does not grow them a line at a
// time. The session's own total, and a thread heard from recently, still
// count from where they stood.
func TestAppServerUsageThreadsBounded(t *testing.T) {
	t.Parallel()
	const own = "01a21188-5573-7943-8473-14f418aa20c3"
	total := func(thread string, in int64) string {
		return fmt.Sprintf(`{"method":"thread/tokenUsage/updated","params":{"threadId":%q,"turnId":"t1","tokenUsage":{"total":{"inputTokens":%d,"cachedInputTokens":0,"outputTokens":0,"reasoningOutputTokens":0,"totalTokens":%[2]d}}}}`, thread, in)
	}
	c, _ := open(t, false)
	_, err := c.Prompt("go")
	require.NoError(t, err)
	lines := []string{`{"id":3,"result":{"turn":{"id":"t1","items":[],"status":"inProgress"}}}`, total(own, 100)}
	const threads = 10000
	for i := range threads {
		lines = append(lines, total(fmt.Sprintf("sub-%d", i), 1))
	}
	lines = append(lines, total(own, 100), total("sub-9999", 3)) // nothing new, then 2 more
	bodies, _ := exchange(c, lines...)
	var sum event.Usage
	for _, b := range bodies {
		if u, ok := b.(*event.Usage); ok {
			sum.Add(*u)
		}
	}
	require.Equal(t, int64(100+threads+2), sum.InputTokens)
	require.LessOrEqual(t, len(c.seen), maxQueued+1, "the session's thread and at most maxQueued others")
}
