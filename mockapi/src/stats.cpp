// mockapi counters as JSON and Prometheus text exposition format 0.0.4.
#include "stats.h"

#include <algorithm>

namespace bp::mockapi::internal {

namespace {
constexpr auto kRelaxed = std::memory_order_relaxed;
}

void Stats::CountResponse(int status) {
  int slot = kSlots - 1;
  for (int i = 0; i < kSlots - 1; ++i) {
    if (kStatuses[i] == status) slot = i;
  }
  responses_[slot].fetch_add(1, kRelaxed);
}

void Stats::CountRejected(Dimension bound, bool never_fits) {
  (never_fits ? too_large_ : rate_limited_)[static_cast<int>(bound)].fetch_add(1, kRelaxed);
}

void Stats::CountAdmitted(int64_t prompt_tokens, int64_t completion_tokens) {
  admitted_.fetch_add(1, kRelaxed);
  prompt_tokens_.fetch_add(static_cast<uint64_t>(prompt_tokens), kRelaxed);
  completion_tokens_.fetch_add(static_cast<uint64_t>(completion_tokens), kRelaxed);
}

void Stats::CountStreamCut(int64_t refunded) {
  stream_cuts_.fetch_add(1, kRelaxed);
  stream_cut_refunded_tokens_.fetch_add(static_cast<uint64_t>(std::max<int64_t>(0, refunded)),
                                        kRelaxed);
}

nlohmann::json Stats::ToJson(const std::vector<LimiterOptions>& options,
                             const std::vector<LimiterState>& states, double uptime_s) const {
  nlohmann::json responses = nlohmann::json::object();
  for (int i = 0; i < kSlots; ++i) {
    responses[i < kSlots - 1 ? std::to_string(kStatuses[i]) : "other"] =
        responses_[i].load(kRelaxed);
  }
  nlohmann::json limited = nlohmann::json::object(), too_large = nlohmann::json::object();
  for (int d = 0; d < kDimensionCount; ++d) {
    limited[DimensionName(static_cast<Dimension>(d))] = rate_limited_[d].load(kRelaxed);
    too_large[DimensionName(static_cast<Dimension>(d))] = too_large_[d].load(kRelaxed);
  }
  nlohmann::json limits = nlohmann::json::array();
  for (size_t i = 0; i < options.size() && i < states.size(); ++i) {
    limits.push_back({{"dimension", DimensionName(options[i].dimension)},
                      {"algorithm", LimiterAlgorithmName(options[i].algorithm)},
                      {"limit", options[i].limit},
                      {"window_s", options[i].window_s},
                      {"remaining", states[i].remaining},
                      {"reset_ms", CeilMs(states[i].reset_us)}});
  }
  return {{"responses", responses},
          {"rate_limited", limited},
          {"too_large", too_large},
          {"admitted", admitted_.load(kRelaxed)},
          {"prompt_tokens", prompt_tokens_.load(kRelaxed)},
          {"completion_tokens", completion_tokens_.load(kRelaxed)},
          {"stream_cuts", stream_cuts_.load(kRelaxed)},
          {"stream_cut_refunded_tokens", stream_cut_refunded_tokens_.load(kRelaxed)},
          {"limits", limits},
          {"uptime_s", uptime_s}};
}

std::string Stats::ToPrometheus(const std::vector<LimiterOptions>& options,
                                const std::vector<LimiterState>& states) const {
  std::string o;
  o += "# HELP mockapi_responses_total HTTP responses by status code.\n";
  o += "# TYPE mockapi_responses_total counter\n";
  for (int i = 0; i < kSlots; ++i) {
    o += "mockapi_responses_total{status=\"" +
         (i < kSlots - 1 ? std::to_string(kStatuses[i]) : std::string("other")) + "\"} " +
         std::to_string(responses_[i].load(kRelaxed)) + "\n";
  }
  auto per_dimension = [&](const char* name, const char* help, const std::atomic<uint64_t>* v) {
    o += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n";
    for (int d = 0; d < kDimensionCount; ++d) {
      o += std::string(name) + "{dimension=\"" + DimensionName(static_cast<Dimension>(d)) + "\"} " +
           std::to_string(v[d].load(kRelaxed)) + "\n";
    }
  };
  per_dimension("mockapi_rate_limited_total", "429s by the dimension that bound.", rate_limited_);
  per_dimension("mockapi_request_too_large_total", "Calls above a limit's capacity, by dimension.",
                too_large_);
  auto counter = [&](const char* name, const char* help, const std::atomic<uint64_t>& v) {
    o += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n" + name +
         " " + std::to_string(v.load(kRelaxed)) + "\n";
  };
  counter("mockapi_admitted_total", "Calls admitted by every limiter.", admitted_);
  counter("mockapi_prompt_tokens_total", "Prompt tokens of admitted calls.", prompt_tokens_);
  counter("mockapi_completion_tokens_total", "Completion tokens of admitted calls.",
          completion_tokens_);
  o += "# HELP mockapi_limit_remaining Remaining budget of each global limiter.\n";
  o += "# TYPE mockapi_limit_remaining gauge\n";
  for (size_t i = 0; i < options.size() && i < states.size(); ++i) {
    o += "mockapi_limit_remaining{index=\"" + std::to_string(i) + "\",dimension=\"" +
         DimensionName(options[i].dimension) + "\",algorithm=\"" +
         LimiterAlgorithmName(options[i].algorithm) + "\"} " + std::to_string(states[i].remaining) +
         "\n";
  }
  return o;
}

}  // namespace bp::mockapi::internal
