package mcpserver

import "time"

// writeGrace is how long a write to ServeStdio's output may stay blocked
// once the client has closed its input (or ServeStdio is told to stop):
// a client that closed stdin may still read the answers of its
// interrupted calls, but one that takes nothing for this long is gone
// (syncio.GraceWriter). Without it the SDK, which answers every call
// before it lets the session end, would hold harness mcp forever.
const writeGrace = 5 * time.Second

// holdMax bounds how long ServeStdio holds the end of its input back
// from the SDK while calls are in flight (input.Read): they end within
// the runs' kill grace and the write grace, so this is a backstop only.
const holdMax = time.Minute
