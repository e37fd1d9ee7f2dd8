// The configurations under test (SPEC section 5, docs/providers.md):
//   naive    FIFO dispatch; the OpenAI SDK's in-activity retry (slot held);
//            when it gives up, the engine's activity retry policy.
//   tn       naive plus Temporal's task-queue throttle: queue-rps-limit = the
//            request cap with ~1 s of burst, priority keys strict, fairness keys
//            (tenants) weighted round-robin (TemporalTaskQueue).
//   litellm  the SDK in front of an in-process LiteLLM proxy model: static
//            per-tenant slices per 60 s window, proxy-local 429 with
//            retry-after 60 s (v3; v1: clock minutes, retry-after to the next
//            minute), TPM reserved and corrected, router retries of upstream
//            429s holding the caller's slot (LitellmLimiter, LitellmOptions).
//   bp, bp-no-drf, bp-no-priority  the admission gate (bp_configuration.h).
// Names are the CLI's. Configurations are used from the engine's io thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bp/loadgen/engine.h"
#include "bp/loadgen/litellm_limiter.h"
#include "bp/loadgen/time_scale.h"

namespace bp::loadgen {

// All names MakeConfiguration accepts, in the order of the paper's tables.
const std::vector<std::string>& ConfigurationNames();
bool IsBaseline(const std::string& name);  // naive | tn | litellm

// naive | tn | litellm; InvalidArgument for other names. `litellm` picks the
// LiteLLM limiter version and token counter (litellm only); tn_rps_limit is
// tn's queue-rps-limit in paper req/s (<= 0: the workload's request cap).
Result<std::unique_ptr<Configuration>> MakeBaselineConfiguration(const std::string& name,
                                                                 const Workload& workload,
                                                                 const TimeScale& scale,
                                                                 const LitellmOptions& litellm = {},
                                                                 double tn_rps_limit = 0);

}  // namespace bp::loadgen
