package acp

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// TestUsageReadings: an answer's usage is read by the sum the agent made
// of it (totalTokens). A turn that writes the cache and reads none is
// Anthropic's (claude-agent-acp 0.101: input apart from the cache), not
// OpenAI's minus a cache write it never reports: its input was lost.
func TestUsageReadings(t *testing.T) {
	cases := []struct {
		name string
		in   acpUsage
		want event.Usage
	}{
		{"anthropic-cache-write-no-read", acpUsage{Input: 5, Output: 100, CacheWrite: 4000, Total: 4105},
			event.Usage{InputTokens: 5, OutputTokens: 100, CacheWriteTokens: 4000}},
		{"anthropic-read-and-write", acpUsage{Input: 5, Output: 100, CacheRead: 300, CacheWrite: 40, Total: 445},
			event.Usage{InputTokens: 5, OutputTokens: 100, CacheReadTokens: 300, CacheWriteTokens: 40}},
		{"openai-cache-included", acpUsage{Input: 1000, Output: 50, CacheRead: 800, Total: 1050},
			event.Usage{InputTokens: 200, OutputTokens: 50, CacheReadTokens: 800}},
		{"openai-thoughts-apart", acpUsage{Input: 1000, Output: 50, Thought: 30, CacheRead: 800, Total: 1080},
			event.Usage{InputTokens: 200, OutputTokens: 80, CacheReadTokens: 800, ReasoningTokens: 30}},
		{"no-cache", acpUsage{Input: 240, Output: 50, Total: 290}, event.Usage{InputTokens: 240, OutputTokens: 50}},
		// Sums stop at the largest int64: wrapped round, 0 - max - max was an input of 2.
		{"saturated", acpUsage{CacheRead: math.MaxInt64, CacheWrite: math.MaxInt64},
			event.Usage{CacheReadTokens: math.MaxInt64, CacheWriteTokens: math.MaxInt64}},
	}
	for _, c := range cases {
		require.Equal(t, c.want, c.in.unified(), c.name)
	}
}

// TestReadOnlyNeverAllowsAlways: read-only allows a read once; offered
// only "allow_always" (a rule the agent may save beyond the run), it
// refuses it as it refuses anything else.
func TestReadOnlyNeverAllowsAlways(t *testing.T) {
	req := func(kind string, options ...string) json.RawMessage {
		var opts []map[string]string
		for _, o := range options {
			opts = append(opts, map[string]string{"optionId": o, "kind": o})
		}
		b, _ := json.Marshal(map[string]any{"toolCall": map[string]string{"toolCallId": "c1", "kind": kind}, "options": opts})
		return b
	}
	for _, c := range []struct {
		name, permissions string
		params            json.RawMessage
		option, denied    string
	}{
		{"read-once", adapters.ReadOnly, req("read", "allow_always", "allow_once", "reject_once"), "allow_once", ""},
		{"read-only-always", adapters.ReadOnly, req("read", "allow_always", "reject_once"), "reject_once", "c1"},
		{"read-only-always-no-reject", adapters.ReadOnly, req("read", "allow_always"), "", "c1"},
		{"edit", adapters.ReadOnly, req("edit", "allow_once", "reject_once"), "reject_once", "c1"},
		{"full-access", adapters.FullAccess, req("edit", "allow_once", "allow_always"), "allow_always", ""},
	} {
		out, denied := choosePermission(c.params, c.permissions, nil)
		require.Equal(t, c.option, out["optionId"], c.name)
		require.Equal(t, c.denied, denied, c.name)
		if c.option == "" {
			require.Equal(t, "cancelled", out["outcome"], c.name)
		}
	}
}

// TestUsageCacheWriteApartFromInput: a totalTokens that adds the cache
// write to the input says the input does not hold it: nothing is taken
// out of the input for it. It was, whenever the sum also matched a read
// or thoughts (Anthropic's output with its thinking: half the input lost).
func TestUsageCacheWriteApartFromInput(t *testing.T) {
	cases := []struct {
		name string
		in   acpUsage
		want event.Usage
	}{
		{"anthropic-thoughts-in-output", acpUsage{Input: 100, Output: 10, Thought: 5, CacheWrite: 50, Total: 160},
			event.Usage{InputTokens: 100, OutputTokens: 10, CacheWriteTokens: 50, ReasoningTokens: 5}},
		{"read-included-write-apart", acpUsage{Input: 1000, Output: 50, CacheRead: 800, CacheWrite: 40, Total: 1090},
			event.Usage{InputTokens: 200, OutputTokens: 50, CacheReadTokens: 800, CacheWriteTokens: 40}},
		{"read-included-write-and-thoughts-apart", acpUsage{Input: 1000, Output: 50, Thought: 30, CacheRead: 800, CacheWrite: 40, Total: 1120},
			event.Usage{InputTokens: 200, OutputTokens: 80, CacheReadTokens: 800, CacheWriteTokens: 40, ReasoningTokens: 30}},
		// A write the input holds (the total adds it nowhere) is still taken out.
		{"write-included", acpUsage{Input: 1000, Output: 50, CacheRead: 800, CacheWrite: 40, Total: 1050},
			event.Usage{InputTokens: 160, OutputTokens: 50, CacheReadTokens: 800, CacheWriteTokens: 40}},
	}
	for _, c := range cases {
		got := c.in.unified()
		require.Equal(t, c.want, got, c.name)
		require.Equal(t, int64(c.in.Total), got.InputTokens+got.OutputTokens+got.CacheReadTokens+got.CacheWriteTokens, c.name)
	}
}
