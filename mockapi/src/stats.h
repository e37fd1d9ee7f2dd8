// Counters of one mockapi process, served as JSON (/stats) and Prometheus
// text (/metrics). All counters are relaxed atomics; thread-safe.
//
//   name (JSON path)            Prometheus series
//   responses.<status>          mockapi_responses_total{status="429"}
//   rate_limited.<dimension>    mockapi_rate_limited_total{dimension="tokens"}
//   too_large.<dimension>       mockapi_request_too_large_total{dimension="tokens"}
//   admitted                    mockapi_admitted_total
//   prompt_tokens               mockapi_prompt_tokens_total      (admitted calls)
//   completion_tokens           mockapi_completion_tokens_total  (admitted calls)
//   limits[i].remaining         mockapi_limit_remaining{index,dimension,algorithm} (global scope)
#pragma once

#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bp/limiter.h"

namespace bp::mockapi::internal {

class Stats {
 public:
  void CountResponse(int status);
  void CountRejected(Dimension bound, bool never_fits);
  void CountAdmitted(int64_t prompt_tokens, int64_t completion_tokens);
  // A paced stream cut short by its client; `refunded` output tokens given
  // back (MockConfig::stream_disconnect).
  void CountStreamCut(int64_t refunded);

  // `states` of the global limiter set, in the order of `options`.
  nlohmann::json ToJson(const std::vector<LimiterOptions>& options,
                        const std::vector<LimiterState>& states, double uptime_s) const;
  std::string ToPrometheus(const std::vector<LimiterOptions>& options,
                           const std::vector<LimiterState>& states) const;

 private:
  static constexpr int kStatuses[] = {200, 400, 404, 405, 413, 429, 500, 503, 529};
  static constexpr int kSlots = 10;  // the statuses above, then "other"
  std::atomic<uint64_t> responses_[kSlots] = {};
  std::atomic<uint64_t> rate_limited_[kDimensionCount] = {};
  std::atomic<uint64_t> too_large_[kDimensionCount] = {};
  std::atomic<uint64_t> admitted_{0};
  std::atomic<uint64_t> prompt_tokens_{0};
  std::atomic<uint64_t> completion_tokens_{0};
  std::atomic<uint64_t> stream_cuts_{0};
  std::atomic<uint64_t> stream_cut_refunded_tokens_{0};
};

}  // namespace bp::mockapi::internal
