// Process control of the Valkey server a scenario's state_outage acts on
// (scenario.h, engine_events.cpp). Linux only (/proc). Not part of the public
// API. Blocking; call from a helper thread, never the engine's io thread.
#pragma once

#include <string>
#include <vector>

namespace bp::loadgen::internal {

// True while `pid` exists and is not a zombie (/proc/<pid>/stat state field).
bool ProcessRunning(int pid);

// A command that starts the server at `url` (process `pid`) again as it runs
// now: element 0 its executable (/proc/<pid>/exe), element 1 its argv[0] (the
// first word of its process title: redis-server is a link to redis-check-rdb
// and picks its role from argv[0]; the rest of the title is rewritten, so
// the original arguments are gone), then --port, --bind, --save,
// --appendonly, --dir, --logfile, --pidfile, --loglevel, --unixsocket,
// --requirepass as CONFIG GET reports them, and --daemonize no. Empty when
// the executable or the server's port cannot be read.
std::vector<std::string> RestartCommandOf(int pid, const std::string& url);

// The process_id the server at `url` reports (INFO server), or -1 when it
// does not answer, has no such field, or `url` is a cluster URL (then the
// node answering is not known in advance).
int ServerPid(const std::string& url);

// Starts command[0] with argv command[1..] in a new session (so Ctrl-C to
// loadgen does not reach it), stdout/stderr to /dev/null. The pid, or -1.
int SpawnDetached(std::vector<std::string> command);

}  // namespace bp::loadgen::internal
