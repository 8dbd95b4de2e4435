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
// Options.OnWarning and as the Outcome returned by Proc.Wait. Warnings are
// handed over by a goroutine of their own, in order: a caller whose
// OnWarning blocks (its own consumer stalled) delays them, and Wait, never
// the watchdogs, the escalation or an interrupt.
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
//     an rmdir: no measurable latency (BenchmarkShortRun). While the run
//     lives, the cgroup's process list is read now and then (every 50 ms
//     while the agent prints or opens tool calls, backing off fourfold
//     at a time to every 30 s while it is silent: heldBackOff), to
//     remember processes that might later move out of it. Such a run does
//     not make the harness a child subreaper (the cgroup needs no
//     re-parenting): its orphans go to init, as without harness. Those
//     that come to the harness anyway (pid 1 of a container, a subreaper
//     for a run without a cgroup or by the caller's choice) are reaped at
//     the end of the run when they died in its cgroup, which a zombie
//     still names when nothing else ties it to the run (it left the
//     agent's session and exited before any look saw it); no other
//     child of the harness is ever waited for. Limits: a process allowed
//     to write another cgroup's cgroup.procs (root in the agent) can move
//     out. A harness killed with SIGKILL cannot end its runs: each agent
//     dies (Pdeathsig), but what it started lives on in the run's cgroup,
//     named harness-run-<token>-locked (a callback that panics on one of
//     our goroutines is not such a death: ContainPanic ends every run
//     first). The harness holds a flock on that
//     directory while it lives, so the lock goes with it: a later harness
//     in the same cgroup that can take the lock of one over a minute old
//     knows its harness gone (a reused pid cannot fool it), kills what is
//     left there (cgroup.kill) and removes it. A run cgroup of an earlier
//     harness (harness-run-<token>, no lock) is removed only once empty.
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
//     The reaper runs with the agent's command line, so pkill -f of the
//     agent reaches it. Stopped (SIGSTOP), it reports nothing: the harness
//     sends it SIGCONT at every step of the escalation and when the
//     agent's pipes close before its end is known, and one that has not
//     reported the agent's end reaperAnswer (2 s) after the SIGKILL
//     (frozen, traced, hung) is ended by the harness, its tree first
//     (every process of the run descends from it while it lives), then
//     itself (reaperConn.end). Killed (SIGKILL), it leaves its orphans to
//     the harness, a subreaper, which tells them from the caller's own
//     children by the run's tag (tagBase): a soft RLIMIT_LOCKS of the
//     run's own, unenforced by Linux since 2.4.25, that the reaper forks
//     the agent with and every process of the run inherits whatever it
//     does to its session, parent or environment. Limit: a process that
//     sets its own RLIMIT_LOCKS sheds the tag (so do the runs of a
//     harness nested in the agent, which get tags of their own), and,
//     with its environment emptied and out of the agent's group, outlives
//     a reaper killed from outside.
//  3. Otherwise (no cgroup, a library user without the hook, not Linux),
//     what earlier versions did: the harness makes itself a child
//     subreaper, walks the agent's descendants in /proc while it runs
//     (at most every 50 ms while the agent prints or opens tool calls,
//     backing off to once a second while it is silent: a silent run of
//     45 s cost the harness 0.78 ms of CPU a second, its start included,
//     on a 2-vCPU VM where one with a cgroup cost 0.21 ms), and at the
//     end kills the group, the processes it saw, and orphans of its
//     own that carry the run's marker in their environment. A process that
//     double-forks faster than a walk with an emptied environment escapes.
//     One that leaves the agent's group and session and dies before a
//     walk saw it, once re-parented to the harness (a subreaper), is never
//     told from the caller's own children (its environment, the marker, is
//     gone with it; its group and session are its own): it stays a zombie
//     of the harness process until that exits. A long-lived program avoids
//     that with MaybeReap.
//
// # Watchdogs
//
// Idle means the agent was silent: time a reader spends in the caller's
// callbacks (a slow consumer of the harness's own output) is not silence,
// as the agent may be blocked writing meanwhile. The work done per wake is
// independent of the number of open tool calls. After the agent's
// terminal event (AgentDone) only the linger rule applies.
//
// The escalation's SIGINT and SIGTERM are each followed by SIGCONT to the
// agent's group: a stopped agent acts on them at once, not at the SIGKILL
// a grace later.
package process
