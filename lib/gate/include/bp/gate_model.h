// bp::gate_model - a pure reference model of the gate's admission and
// release decisions (admit.lua, release.lua), with no I/O and no store: the
// rule of docs/gate.md ("The gate", "The rule", "Adaptive caps") as plain
// C++ over an explicit clock, so the rule can be read, unit-tested by named
// cases and property-tested without a server, and the scripts can be
// checked against it step by step (tests/gate/gate_model_diff_test.cpp).
// Where the docs are silent (tie-breaks, eviction order, float order of
// operations) the scripts are the reference: for a given state, config and
// input the model computes bit-for-bit what the scripts compute (doubles in
// the same order of operations; the store's sorted sets order by score, then
// member bytes).
//
// Notation (paper section IV, Algorithm 1; docs/gate.md):
//   d in {r, t}       dimensions: requests, tokens
//   C_d               cap, per second (learned cap f_d * C_d with adapt on)
//   burst_s           seconds of cap the L1 bucket holds: capacity C_d*burst_s
//   w_q               queue weight (eq. 1): omega_k * w_t / W_k, W_k the summed
//                     w_t of class k's backlogged tenants, q's included
//                     (hierarchical share rule); omega_k * w_t (flat rule)
//   sigma             dominant share of a call: max_d c_d / C_d (seconds)
//   F_q               a queue's virtual finish tag (seconds / weight)
//   V                 system virtual time (seconds / weight)
//   D_d               eq. (1): sum over backlogged queues of w_q * c_d / sigma,
//                     kept as the sum over classes of E_d = omega_k A_d / W_k
//                     (flat: omega_k A_d), A_d = sum of w_t c_d / sigma
//   X* = min_d C_d/D_d  the virtual clock's speed (virtual units per second)
// Units: times are microseconds (doubles holding integers) as the scripts
// keep them, now_ms on the interface is milliseconds; levels and costs are
// requests and tokens; tags and V are dominant-share seconds per weight.
//
// Bounds (gate_model_props_test.cpp checks each over long seeded runs of
// simulated workers; docs/gate-model.md). At constant caps, adapt off:
//   P1 (rate; GCRA's bound, ITU-T I.371, tolerance = the bucket): over any
//      span [x, y] of server time, the cost admitted in dimension d is at
//      most C_d * (y - x) + max(C_d * burst_s, largest single cost) in
//      estimate mode, and in reconcile mode when actual = estimate. In
//      reservation mode (gate.h, GateMode): the tokens used by the calls
//      admitted in [x, y] are at most C_t * (y - x) + max(B_t, largest
//      reservation) + m + 2 * O(x), B_t = C_t * burst_s, m the largest
//      max_tokens, O(x) the reserved part outstanding at x, when every
//      call uses between its prompt and its reservation. The runs reach the
//      plain bound with equality: it is tight.
//   P2 (share; DRFQ with weights, eq. 1, hierarchical as H-GPS, Bennett
//      and Zhang 1997): when every queue always has a caller waiting, over
//      a window of >= 800 s after a 60 s warm-up,
//      per class: class k's admitted dominant share D_k (sum of sigma over
//        its queues' admissions) per omega_k is within epsilon_class = 0.05
//        of the common level sum(D) / sum(omega) (so class k gets
//        omega_k / sum(omega) of the binding cap whatever its tenants);
//      per tenant: inside class k, D_q / w_t is within epsilon_tenant =
//        0.05 of D_k / W_k (tenant t gets w_t / W_k of its class's part).
//      Measured in the runs: <= 0.005 at both levels. Under share_rule flat
//      each queue's D_q / (omega_k w_t) is within 0.05 of
//      sum(D) / sum(omega_k w_t) instead.
//   Under class_policy strict P2 is not a bound: a class is served only
//      while no higher class is eligibly backlogged (docs/gate.md "Strict
//      priority"); the named cases pin its deltas.
//   P3 (work conservation): under the same backlog the binding cap never
//      idles: the cost admitted in its dimension over a window is at least
//      C_b * window - (C_b * burst_s + one largest cost) (and, by P1, at
//      most C_b * window + the same).
//
// Thread-safety: none needed; a Model is a value, used by one thread.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bp/gate_ranges.h"  // the defaults of the configuration

namespace bp::gate_model {

// The configuration admit.lua and release.lua read (configure.lua's fields
// with its defaults applied). Units as in bp::GateCaps / bp::GateTuning.
struct Config {
  double requests_per_s = 0;                     // C_r; the target is configured when > 0
  double tokens_per_s = 0;                       // C_t; 0 = no token dimension
  double burst_s = kDefaultGateBurstS;           // L1 capacity C_d * burst_s
  double max_cost_requests = 0;                  // 0 = max(60 C_r, capacity): REJECT above
  double max_cost_tokens = 0;                    // 0 = max(60 C_t, capacity)
  std::vector<double> omega;                     // omega_1..omega_K; empty = no priority weights
  std::map<std::string, double> tenant_weights;  // w_t; absent = 1
  double lend_fraction = kDefaultGateLendFraction, slack_ms = kDefaultGateSlackMs;
  double grace_ms = kDefaultGateGraceMs;
  double ticket_ttl_ms = kDefaultGateTicketTtlMs;
  bool adapt = false;
  double adapt_beta = kDefaultGateAdaptBeta, adapt_recover_ms = kDefaultGateAdaptRecoverMs;
  double adapt_window_ms = kDefaultGateAdaptWindowMs;
  double adapt_min_429 = kDefaultGateAdaptMin429;
  // The share rule: hierarchical (classes by omega_k, then tenants by w_t
  // inside a class) or flat (every queue by omega_k * w_t).
  enum class ShareRule { kHier, kFlat } share_rule = ShareRule::kHier;
  // The class policy: fair (classes share by the rule above) or strict (a
  // call of class k is served only while no configured class j < k is
  // eligibly backlogged: docs/gate.md "Strict priority").
  enum class ClassPolicy { kFair, kStrict } class_policy = ClassPolicy::kFair;
};

// The longest admit-ahead wait, in refills of the call's own need: a caller
// that asks for it (AdmitInput::ahead_ms) is admitted at most this many of
// its costs ahead of L1's refill, so a later caller with a smaller finish
// tag waits behind at most this many calls of the largest cost (docs/gate.md,
// "Admit ahead"). A wait in bucket refills instead (four) let the many
// workers of a low class commit the refill ahead of the few of a high class,
// whose calls then waited longer than their share allows.
inline constexpr double kAdmitAheadCalls = 4;
// The admit-ahead wait a of one call, microseconds (0 = off):
// min(ahead_ms, kAdmitAheadCalls * own_us), own_us the refill time of the
// call's own L1 need, max_d need_d / C_d, in microseconds.
double AdmitAheadUs(int64_t ahead_ms, double own_us);

enum class Mode { kEstimate, kReconcile, kReservation };
enum class Ablation { kNone, kNoDrf, kNoPriority };

// A sorted set as the store keeps one: score per member, ordered by score
// then member bytes.
class SortedSet {
 public:
  bool Contains(const std::string& m) const { return score_.count(m) == 1; }
  std::optional<double> Score(const std::string& m) const;
  void Add(const std::string& m, double score);    // ZADD
  void AddGT(const std::string& m, double score);  // ZADD GT: only raise, or add
  void AddXX(const std::string& m, double score);  // ZADD XX: only existing
  bool Remove(const std::string& m);               // ZREM
  // Members with score <= max, lowest first, at most `limit` (ZRANGEBYSCORE).
  std::vector<std::string> UpTo(double max, size_t limit) const;
  // The first `n` (member, score) pairs (ZRANGE 0 n-1 WITHSCORES).
  std::vector<std::pair<std::string, double>> First(size_t n) const;
  const std::set<std::pair<double, std::string>>& ordered() const { return order_; }
  size_t size() const { return score_.size(); }

 private:
  std::map<std::string, double> score_;
  std::set<std::pair<double, std::string>> order_;
};

// 'g': the L1 levels and the fair-queuing globals.
struct Bucket {
  double r = 0, t = 0;    // L1 levels (requests, tokens); negative = debt
  double ts_us = 0;       // time of the last refill
  double V = 0;           // virtual time
  double Dr = 0, Dt = 0;  // eq. (1) sums over the backlog
  double seq = 0;         // ticket counter
  double evt_us = 0;      // time of the last eviction pass
};

// 'q:<k>:<tenant>': one queue.
struct Queue {
  double F = 0;           // virtual tag (finish tag; start tag while backlogged)
  double T_us = 0;        // last promised wake-up
  double dr = 0, dt = 0;  // this queue's part of D_r, D_t while backlogged
  double bl = 0;          // backlogged: 1 / 0
  double zs_us = 0;       // last refresh of its seen-set score
  double admits = 0, defers = 0, lent = 0;
  double w = 0;  // the w_t it added to its class's W while backlogged
};

// 'c:<k>': one class's totals and its part of eq. (1).
struct ClassSums {
  double requests = 0, tokens = 0;  // admitted (release-corrected)
  double n = 0;                     // backlogged tenants
  double W = 0;                     // their summed weight w_t
  double Ar = 0, At = 0;            // their summed w_t c_d / sigma
  double Er = 0, Et = 0;            // the class's part of D_r, D_t
  double until_us = 0;              // the latest wake-up + grace promised to its queues
};

// 'l1hold': a due caller waiting for L1 to refill for it.
struct Hold {
  double until_us = 0, F = 0, need_r = 0, need_t = 0;
  std::string queue;
};

// 'l1line': the end of the L1 line per dimension: the time up to which L1's
// refill is promised to callers deferred for L1 (admit.lua).
struct L1Line {
  double r_us = 0, t_us = 0;
};

// 'ad': the adaptive caps' learned fractions (release.lua writes them on 429s
// and on served calls whose rate-limit headers move them).
struct Learned {
  double fr = 1, tr_us = 0, ft = 1, tt_us = 0, tau_us = 0, ws_us = 0;
  double nr = 0, nt = 0, hr_us = 0, ht_us = 0;
};

// 'ah': the header rule's measure of outside use, per dimension (release.lua;
// docs/gate.md "Adaptive caps"): the first answer of the provider's current
// fixed window (remaining ra, reset instant ea_us in the scripts' time, its
// reset rsta_ms), the cost u of the served calls released since it, the
// outside rate xo (per s) last measured, and the margin k in [1,
// kHeaderMarginMax], the factor by which the cap sits above the rate left
// (an integral of the window's unused budget). All zero: never anchored.
struct HeaderWindow {
  double ra = 0, ea_us = 0, rsta_ms = 0, u = 0, xo = 0, k = 0;
};
// The header rule's largest margin k (prelude.lua's HEADER_MARGIN_MAX): the
// learned cap sits at most this many times above the rate the provider
// leaves the tenants.
inline constexpr double kHeaderMarginMax = 2;

// A ticket: what an admission debited, for its release.
struct Ticket {
  std::string k;             // class, as text
  int64_t requests = 0;      // debited requests
  int64_t debited = 0;       // debited tokens (reservation: prompt + max_tokens)
  int ablation = 0;          // 0 none, 1 no-DRF, 2 no-priority
  std::string queue;         // "<k>:<tenant>"
  int64_t tag_tokens = 0;    // tokens charged on the tag (the estimate)
  std::string Text() const;  // the stored form
};

// Everything the scripts keep for one target (besides its configuration).
struct State {
  std::optional<Bucket> g;
  std::map<std::string, Queue> queues;       // by queue id
  std::map<std::string, ClassSums> classes;  // by class text
  std::optional<Hold> hold;
  std::optional<L1Line> line;
  std::optional<int64_t> reserved;                // 'rsv' = O
  std::optional<Learned> learned;                 // 'ad'
  std::optional<std::array<HeaderWindow, 2>> header;  // 'ah': requests, tokens
  SortedSet backlog, expiry, seen, reservations;  // ':bl', ':bx', ':seen', ':rsv'
  // By ticket number. The store expires tickets after ticket_ttl_ms of real
  // time (PX); the model keeps them until released.
  std::map<std::string, Ticket> tickets;
};

// One admission's arguments, as admit.lua's ARGV. The tenant is assumed
// valid (bp::ValidTenantName); a priority < 1 or a negative cost gives
// kError, an unconfigured target (requests_per_s <= 0) too.
struct AdmitInput {
  std::string tenant;
  int64_t priority = 1;
  int64_t requests = 1, tokens = 0, max_tokens = 0;
  Mode mode = Mode::kReconcile;
  Ablation ablation = Ablation::kNone;
  int64_t queue_ttl_ms = 10000;
  int64_t now_ms = 0;  // > 0 (the scripts' server TIME otherwise)
  // The longest wait before calling the provider that the caller will keep
  // (admit ahead: a due call that only L1 holds back, at the head of the L1
  // line, whose refill comes within a = min(ahead_ms, kAdmitAheadCalls
  // refills of its own need), is admitted now with AdmitOutput::start_in_ms,
  // the level going into a debt of at most C_d * a). 0: never admitted
  // ahead. < 0: kError.
  int64_t ahead_ms = 0;
};

enum class Verdict { kAdmit, kDefer, kReject, kError };

struct AdmitOutput {
  Verdict verdict = Verdict::kError;
  std::string ticket;    // ADMIT: "0" in estimate mode
  int64_t delta_ms = 0;  // DEFER: 1..60000
  std::string binding;   // DEFER: "fair", "l1:requests", "l1:tokens" or "strict"
  std::string reason;    // REJECT / ERROR
  int64_t start_in_ms = 0;  // ADMIT ahead: wait this long before calling the provider
};

// One release's arguments, as release.lua's ARGV (the report's numbers:
// -1 = absent; with outcome "ok" the remaining and reset numbers feed the
// adaptive caps' header rule, docs/gate.md "Adaptive caps").
struct ReleaseInput {
  std::string ticket;
  int64_t requests = 0, tokens = 0;  // actual usage
  int64_t now_ms = 0;
  std::string outcome = "ok";  // "ok", "429", "refused"
  std::string bound;           // "", "requests", "tokens"
  double retry_after_ms = -1, remaining_requests = -1, reset_requests_ms = -1;
  double remaining_tokens = -1, reset_tokens_ms = -1;
};

// One target: its configuration and state. Admit and Release change the
// state as the scripts change the store; Configure as configure.lua does
// for the fields of Config (dropping 'ad' when adapt is off).
class Model {
 public:
  Config config;
  State state;

  void Configure(const Config& c);
  AdmitOutput Admit(const AdmitInput& in);
  // 1 when applied, 0 when the ticket is unknown (as release.lua answers).
  int Release(const ReleaseInput& in);
};

// The class weight omega_k a call uses: 1 when absent or under the
// no-priority ablation; a weight <= 0 counts as 1e-9 (prelude.lua).
double ClassWeight(std::optional<double> omega, bool no_priority);

// The learned fraction of a cap at time now_us (release.lua, "Adaptive caps").
double LearnedFraction(std::optional<double> f, double t_us, std::optional<double> tau_us,
                       double now_us);

}  // namespace bp::gate_model
