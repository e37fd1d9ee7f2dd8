// One run: configure the upstream, build the configuration, run the engine
// (runner.h).
#include "bp/loadgen/runner.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "bp/decimal.h"
#include "bp/gate_admin.h"
#include "bp/loadgen/bp_configuration.h"
#include "bp/loadgen/configurations.h"
#include "bp/loadgen/engine.h"
#include "bp/loadgen/http_client.h"
#include "bp/loadgen/operator_aids.h"
#include "bp/loadgen/time_scale.h"
#include "bp/mockapi/config.h"
#include "bp/valkey.h"

namespace bp::loadgen {
namespace {

Status ConfigureUpstream(const HttpEndpoint& endpoint, const Workload& workload, double speedup) {
  // In paper units; mockapi divides its durations by the speedup (RealTimePatch).
  nlohmann::json upstream = workload.upstream;
  upstream["speedup"] = speedup;
  std::string body = upstream.dump();
  HttpResponse r = HttpRequestBlocking(endpoint, "PUT", "/admin/config", body, 5000);
  if (r.status == 0) {
    return Status::Unavailable("mockapi at " + endpoint.host + ":" + std::to_string(endpoint.port) +
                               " did not answer PUT /admin/config: " + r.error);
  }
  if (r.status != 200) {
    return Status::InvalidArgument("mockapi refused the upstream section of " + workload.source +
                                   " (HTTP " + std::to_string(r.status) + "): " + r.body);
  }
  return Status::Ok();
}

// Sleeps until the wall clock reaches unix_ms, first saying how long (one
// line, when `say`); warns when it already passed by more than 50 ms (the
// merge aligns on the recorded start anyway).
void WaitUntilUnixMs(int64_t unix_ms, const std::string& label, bool say) {
  const auto at = std::chrono::system_clock::time_point(std::chrono::milliseconds(unix_ms));
  const auto now = std::chrono::system_clock::now();
  if (now < at) {
    if (say) {
      const double wait_s =
          static_cast<double>(
              std::chrono::duration_cast<std::chrono::milliseconds>(at - now).count()) /
          1000;
      spdlog::info("{}: waiting {:.1f} s for the shared start (unix ms {})", label, wait_s,
                   unix_ms);
    }
    std::this_thread::sleep_until(at);
  } else if (now - at > std::chrono::milliseconds(50)) {
    spdlog::warn("{}: the shared start time passed {} ms ago; starting now", label,
                 std::chrono::duration_cast<std::chrono::milliseconds>(now - at).count());
  }
}

}  // namespace

Status ConfigureUpstream(const Workload& workload, const RunOptions& options) {
  auto endpoint = ParseHttpUrl(options.upstream_url);
  if (!endpoint.ok()) return endpoint.status();
  return ConfigureUpstream(*endpoint, workload, options.speedup);
}

Status ValidateRunOptions(const RunOptions& o) {
  if (auto scale = TimeScale::Of(o.speedup); !scale.ok()) {
    return Status::InvalidArgument("--" + scale.status().message());
  }
  if (auto u = ParseHttpUrl(o.upstream_url); !u.ok()) {
    return Status::InvalidArgument("--upstream: " + u.status().message());
  }
  if (auto v = ParseValkeyUrl(o.valkey_url); !v.ok()) {
    return Status::InvalidArgument("--valkey: " + v.status().message());
  }
  if (o.gate_threads < 1 || o.gate_threads > 256) {
    return Status::InvalidArgument("--gate-threads must be in [1, 256], got " +
                                   std::to_string(o.gate_threads));
  }
  if (o.gate_command_timeout_ms < 1 || o.gate_command_timeout_ms > kMaxGateTimeoutMs) {
    return Status::InvalidArgument("--gate-timeout-ms must be in [1, " +
                                   std::to_string(kMaxGateTimeoutMs) + "] ms, got " +
                                   std::to_string(o.gate_command_timeout_ms));
  }
  if (o.admit_ahead_ms < 0 || o.admit_ahead_ms > kMaxAdmitAheadMs) {
    return Status::InvalidArgument("--admit-ahead-ms must be in [0, " +
                                   std::to_string(kMaxAdmitAheadMs) + "] paper ms (0 = off), got " +
                                   std::to_string(o.admit_ahead_ms));
  }
  if (o.gate_breaker_cool_off_ms < 0 || o.gate_breaker_cool_off_ms > kMaxGateBreakerMs) {
    return Status::InvalidArgument(
        "--gate-breaker-ms must be in [0, " + std::to_string(kMaxGateBreakerMs) +
        "] ms (0 = no circuit breaker), got " + std::to_string(o.gate_breaker_cool_off_ms));
  }
  return Status::Ok();
}

namespace {

// mockapi's message for a PUT of `section` at `speedup`; "" when accepted.
std::string MockapiRefusal(nlohmann::json section, double speedup) {
  section["speedup"] = speedup;
  auto real = mockapi::RealTimePatch(std::move(section));
  if (!real.ok()) return real.status().message();
  auto config = mockapi::ConfigFromJson(*real, mockapi::MockConfig{});
  return config.ok() ? "" : config.status().message();
}

}  // namespace

Status ValidateSpeedupFor(const Workload& workload, double speedup) {
  const std::string shown = FormatShort(speedup);
  auto check = [&](const nlohmann::json& section, const std::string& path) -> Status {
    if (!section.is_object() || !MockapiRefusal(section, 1.0).empty()) return Status::Ok();
    const std::string why = MockapiRefusal(section, speedup);
    if (why.empty()) return Status::Ok();
    // mockapi's message gives its range as sent and the speedup.
    return Status::InvalidArgument(std::string("--speedup ") + shown + ": " + workload.source +
                                   ": " + path + "." + why);
  };
  if (Status s = check(workload.upstream, "upstream"); !s.ok()) return s;
  for (size_t i = 0; i < workload.events.size(); ++i) {
    const ScenarioEvent& ev = workload.events[i];
    if (ev.type != EventType::kUpstreamLimits) continue;
    const nlohmann::json section = {{"limits", ev.limits}};
    if (Status s = check(section, "events[" + std::to_string(i) + "]"); !s.ok()) return s;
  }
  return Status::Ok();
}

Result<std::vector<std::string>> ParseConfigurationList(const std::string& text) {
  std::string names;
  for (const auto& n : ConfigurationNames()) names += (names.empty() ? "" : ", ") + n;
  if (text.empty())
    return Status::InvalidArgument("--config is empty (one or more of " + names + ")");
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    if (item.empty()) {
      return Status::InvalidArgument("--config has an empty item in \"" + text + "\"");
    }
    bool known = false;
    for (const auto& n : ConfigurationNames()) known = known || n == item;
    if (!known) {
      return Status::InvalidArgument("unknown configuration \"" + item + "\" in --config (" +
                                     names + ")");
    }
    for (const auto& seen : out) {
      if (seen == item) {
        return Status::InvalidArgument("configuration \"" + item + "\" twice in --config");
      }
    }
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Result<RunRecords> RunOnce(const Workload& workload, const RunOptions& options) {
  auto scale = TimeScale::Of(options.speedup);
  if (!scale.ok()) return scale.status();
  auto endpoint = ParseHttpUrl(options.upstream_url);
  if (!endpoint.ok()) return endpoint.status();

  std::unique_ptr<Configuration> configuration;
  std::string gate_target, gate_server;
  if (IsBaseline(options.configuration)) {
    auto c = MakeBaselineConfiguration(options.configuration, workload, *scale, options.litellm,
                                       options.tn_rps_limit);
    if (!c.ok()) return c.status();
    configuration = std::move(*c);
  } else {
    auto ablation = BpAblationOf(options.configuration);
    if (!ablation.ok()) {
      return Status::InvalidArgument("unknown configuration \"" + options.configuration +
                                     "\" (naive|tn|litellm|bp|bp-no-drf|bp-no-priority)");
    }
    BpOptions bp;
    bp.valkey_url = options.valkey_url;
    bp.ablation = *ablation;
    bp.gate_threads = options.gate_threads;
    bp.command_timeout_ms = options.gate_command_timeout_ms;
    bp.breaker_cool_off_ms = options.gate_breaker_cool_off_ms;
    bp.admit_ahead_ms = static_cast<int64_t>(
        std::ceil(static_cast<double>(scale->PaperMsToRealUs(options.admit_ahead_ms)) / 1000));
    int64_t unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
    bp.target = workload.name + "-" + options.configuration + "-r" +
                std::to_string(options.repeat) + "-" + std::to_string(unix_ms);
    if (!options.gate_target.empty()) bp.target = options.gate_target;
    bp.configure = options.configure_gate;
    bp.declared_config = options.gate_config;
    if (options.progress) {
      spdlog::info("{} {} #{}: gate target \"{}\" ({})", workload.name, options.configuration,
                   options.repeat, bp.target, BpctlStatusCommand(options.valkey_url, bp.target));
    }
    gate_target = bp.target;
    auto c = MakeBpConfiguration(workload, *scale, bp);
    if (!c.ok()) return c.status();
    configuration = std::move(*c);
    // Named in the report (summary.json "gate_server"): results depend on it.
    GateAdmin probe(GateOptions{.url = options.valkey_url, .target = bp.target});
    if (auto server = probe.Server(); server.ok()) {
      gate_server = *server;
      if (options.progress) spdlog::info("{}: gate server {}", bp.target, gate_server);
    }
  }

  if (options.configure_upstream) {
    if (Status s = ConfigureUpstream(*endpoint, workload, options.speedup); !s.ok()) return s;
  }

  EngineOptions eo;
  eo.scale = *scale;
  eo.seed = options.seed + static_cast<uint64_t>(options.repeat);
  eo.upstream = *endpoint;
  eo.progress = options.progress;
  eo.sdk_retry_after_bound = options.sdk_retry_after_bound;
  eo.gate_target = gate_target;
  eo.valkey_url = options.valkey_url;
  eo.valkey_pid = options.valkey_pid;
  eo.valkey_pidfile = options.valkey_pidfile;
  eo.label = workload.name + " " + options.configuration + " #" + std::to_string(options.repeat);
  if (!options.part.empty()) eo.label += " " + options.part;
  Engine engine(workload, eo, *configuration);
  if (options.start_at_unix_ms > 0) {
    WaitUntilUnixMs(options.start_at_unix_ms, eo.label, options.progress);
  }
  RunRecords records = engine.Run();
  records.configuration = options.configuration;
  records.repeat = options.repeat;
  records.gate_target = gate_target;
  records.gate_server = gate_server;
  if (const std::string line = GateFailOpenSummary(records, eo.label); !line.empty()) {
    spdlog::warn("{}", line);
  }
  int64_t failed = 0, unfinished = 0;
  for (const ActivityRecord& a : records.activities) {
    // A cancelled activity (its tenant left, scenario) is completed and not
    // OK, but it is no failure (as in the metrics and table.md).
    if (a.cancelled) continue;
    failed += !a.ok && a.completed_us >= 0 ? 1 : 0;
    unfinished += a.completed_us < 0 ? 1 : 0;
  }
  if (failed > 0 || unfinished > 0) {
    spdlog::warn("{}: {} activities failed, {} never completed (per tenant and cause: table.md)",
                 eo.label, failed, unfinished);
  }
  return records;
}

}  // namespace bp::loadgen
