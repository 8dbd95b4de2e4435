package mcpserver

import "time"

// writeGrace is how long a write to ServeStdio's output may stay blocked
// once the client has closed its input (or ServeStdio is told to stop):
// a client that closed stdin may still read the answers of its
// interrupted calls, but one that takes nothing for this long is gone
// (syncio.GraceWriter). Without it the SDK, which answers every call
// before it lets the session end, would hold harness mcp forever.
const writeGrace = 5 * time.Second
