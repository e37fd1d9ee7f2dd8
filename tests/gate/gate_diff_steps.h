// The differential test's steps: a random generator of admissions, releases,
// configuration changes and clock steps, and a harness that applies one step
// to the real scripts (through bp::Gate and bp::GateAdmin, with the explicit
// clock now_ms) and to the reference model, and says where they disagree.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bp/gate.h"
#include "bp/gate_admin.h"
#include "bp/gate_model.h"
#include "bp/valkey.h"

namespace bp::test {

// What stays fixed through one seed's run: the gate's options (mode,
// ablation, queue TTL) and the pools the steps draw from.
struct DiffRun {
  GateOptions options;
  int tenants = 8;  // tenant names t0..t<n-1>
  int classes = 3;  // priorities drawn from 1..classes (+1: above K)
  bool strict = false;  // class_policy strict (else fair)
  std::string Describe() const;
};
DiffRun MakeDiffRun(uint32_t seed);

struct DiffStep {
  enum class Kind { kAdmit, kRelease, kCaps, kOmega, kTenantWeight, kTuning } kind;
  int64_t now_ms = 0;
  gate_model::AdmitInput admit;      // kAdmit
  gate_model::ReleaseInput release;  // kRelease
  GateCaps caps;                     // kCaps
  std::vector<double> omega;         // kOmega
  std::string tenant;                // kTenantWeight
  double weight = 0;                 // kTenantWeight: <= 0 unsets
  GateTuning tuning;                 // kTuning
  std::string Describe() const;
};

class DiffGenerator {
 public:
  DiffGenerator(uint32_t seed, const DiffRun& run);
  // The next step; releases pick one of `model`'s outstanding tickets.
  DiffStep Next(const gate_model::Model& model);

 private:
  std::mt19937_64 rng_;
  DiffRun run_;
  int64_t now_ms_;
  int64_t step_ = 0;
  double bucket_tokens_ = 0;  // C_t * burst_s of the last caps
  int classes_ = 0;           // K of the last omega
  int64_t Uniform(int64_t lo, int64_t hi);
  bool Chance(double p);
  DiffStep Admit();
  DiffStep Release(const gate_model::Model& model);
};

class DiffHarness {
 public:
  DiffHarness(Gate& gate, const std::string& url);
  // "" when the scripts and the model agree on the step's outcome and on
  // every state field after it, else the first disagreement.
  std::string Apply(const DiffStep& step);
  const gate_model::Model& model() const { return model_; }
  // How many steps took each path (e.g. "ADMIT", "DEFER l1:tokens",
  // "REJECT", "release 429", "lent"), to show what a run covered.
  const std::map<std::string, int64_t>& coverage() const { return coverage_; }

 private:
  Gate& gate_;
  GateAdmin admin_;
  ValkeyConnection raw_;
  gate_model::Model model_;
  std::map<std::string, int64_t> coverage_;
  double lent_total_ = 0;  // sum of the queues' lent counters (evictions lower it)
  std::string ApplyToBoth(const DiffStep& step);
};

}  // namespace bp::test
