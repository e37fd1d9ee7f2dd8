// What loadgen does for the person running it, beside the runs: finding a
// shipped workload by name, the bpctl command that inspects a run's gate
// target, and putting back the mockapi configuration it found.
//
// docs/loadgen.md ("Workload names", "Gate target", "The upstream's
// configuration") describes each for users.
#pragma once

#include <string>
#include <vector>

#include "bp/status.h"

namespace bp::loadgen {

// The folders searched for shipped workloads, in order: $BP_CONFIG_DIR when
// set; <dir of the running binary>/../share/backpressure/configs (an
// installed loadgen); the source tree's configs/ as known at build time.
// Folders that do not exist are left out. Reads the environment and
// /proc/self/exe; thread-safe.
std::vector<std::string> ConfigSearchDirs();

// The file for one --workload argument. `arg` itself when it is an existing
// path, contains a '/' or ends in ".json"; else a shipped name
// ([A-Za-z0-9_.-]+): the first of DIR/workloads/NAME.json and
// DIR/scenarios/NAME.json over `dirs`. NotFound naming the folders searched
// and the closest shipped names otherwise. Pure apart from file existence
// checks; thread-safe.
Result<std::string> ResolveWorkloadArg(const std::string& arg,
                                       const std::vector<std::string>& dirs);

// The complete bpctl command that shows a gate target of a run:
// "bpctl --valkey URL --target T status", with any user name and password
// removed from URL (a log line must not carry them; the command then notes
// that the credentials of --valkey are needed). Pure; thread-safe.
std::string BpctlStatusCommand(const std::string& valkey_url, const std::string& target);

// mockapi's configuration as loadgen found it (GET /admin/config), to PUT
// back when the runs end, so a user's mockapi does not keep the last
// workload's limits. Not thread-safe; Restore may be called from any thread
// once Take returned.
class UpstreamConfigSnapshot {
 public:
  // GET upstream_url/admin/config within 5 s. Unavailable when mockapi does
  // not answer (the runs will report that themselves), Internal on any
  // answer but 200.
  static Result<UpstreamConfigSnapshot> Take(const std::string& upstream_url);

  // PUT the saved body back within 5 s; Unavailable/Internal as Take.
  Status Restore() const;

  const std::string& url() const { return url_; }

 private:
  std::string url_;
  std::string body_;
};

// Until the process exits, SIGINT and SIGTERM restore `snapshot` (kept by
// pointer: it must live to the end of main), print one line on stderr and end
// the process with exit code 128 + the signal (130, 143). The handler only
// writes to a pipe; a thread started here does the PUT. Call once, before
// any other thread that should not see the signal's default action.
void RestoreUpstreamOnSignal(const UpstreamConfigSnapshot* snapshot);

}  // namespace bp::loadgen
