// Package process supervises one agent CLI process: it spawns it in its own
// process group, drains stdout (as capped lines) and stderr (keeping a
// bounded tail) for its whole life, runs the idle, tool, hard and linger
// watchdogs, escalates SIGINT/SIGTERM → SIGKILL, and at the end of the run
// finds and kills every process the run started, including ones that left
// the group (setsid, double fork, an emptied environment). It implements
// docs/supervision.md.
//
// The package knows processes, never formats: the caller tells it about tool
// calls (Proc.ToolStarted, Proc.ToolEnded) and the agent's terminal event
// (Proc.AgentDone) from the events it parsed. It never prints or logs;
// everything it has to say comes back as *event.Warning values through
// Options.OnWarning and as the Outcome returned by Proc.Wait.
//
// # Every process of a run, and only those
//
// A process can leave everything that names it as the agent's: its process
// group and session (setsid), its parent (a double fork re-parents it), its
// environment (env -i drops the run's marker). What it cannot leave is
// where it was born, so a run is given a place of its own, by the first of
// these that works:
//
//  1. A cgroup v2 of its own (where the harness's cgroup is writable: root,
//     a delegated systemd unit; a hybrid layout mounts cgroup2 at
//     /sys/fs/cgroup/unified). The agent is cloned into it
//     (CLONE_INTO_CGROUP) and so is everything it starts, whatever it does
//     to its session, parent or environment. At the end of the run the
//     cgroup is emptied with cgroup.kill and removed. It costs a mkdir and
//     an rmdir: no measurable latency (BenchmarkShortRun). Limits: a
//     process allowed to write another cgroup's cgroup.procs (root in the
//     agent) can move out; a harness killed with SIGKILL leaves its empty
//     cgroup directory, removed by a later harness after a minute.
//  2. A reaper of its own, when the binary installed the hook (MaybeReap,
//     first thing in main; TestMain in tests): the harness binary is
//     re-executed as the agent's parent, a child subreaper (like tini -s),
//     and starts the agent. Every orphan of the run is re-parented to that
//     reaper and to no other, so at the end it kills its whole tree, and
//     nothing of another run. The agent's pid, exit status or signal come
//     from the reaper exactly as from a direct child; signals and the
//     escalation still go to the agent's group from the harness. It costs
//     one start of the harness binary per run (a few milliseconds, before
//     the agent starts). Limit: a harness killed with SIGKILL takes its
//     reapers and agents with it (Pdeathsig), but their orphans then go to
//     init.
//  3. Otherwise (no cgroup, a library user without the hook, not Linux),
//     what earlier versions did: the harness makes itself a child
//     subreaper, walks the agent's descendants in /proc while it runs
//     (at most every 50 ms while the agent prints or opens tool calls, backing off
//     to once a second while it is silent: an idle run costs well under a
//     millisecond of CPU a second), and
//     at the end kills the group, the processes it saw, and orphans of its
//     own that carry the run's marker in their environment. A process that
//     double-forks faster than a walk with an emptied environment escapes.
//
// # Watchdogs
//
// Idle means the agent was silent: time a reader spends in the caller's
// callbacks (a slow consumer of the harness's own output) is not silence,
// as the agent may be blocked writing meanwhile. The work done per wake is
// independent of the number of open tool calls. After the agent's
// terminal event (AgentDone) only the linger rule applies.
package process
