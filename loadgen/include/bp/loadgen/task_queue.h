// The engine's activity task queue: where scheduled activities wait for a
// worker slot. Its order is what distinguishes the configurations' dispatch:
//   FifoTaskQueue      naive, litellm, bp: first scheduled, first dispatched.
//   TemporalTaskQueue  tn: Temporal's matching service with a dispatch-rate
//                      limit (queue-rps-limit, a token bucket of ~1 s burst,
//                      request-only, blind to upstream success; retries pass
//                      through it again), priority keys strict between levels
//                      (lower first) and fairness keys (here the tenant) served
//                      by weighted round-robin within a level
//                      (docs/providers.md, "Temporal").
// Time is passed in (microseconds on the run clock), so tests drive it exactly.
// Not thread-safe: the engine uses it from its one io thread.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace bp::loadgen {

struct Task {
  int64_t activity_id = 0;
  int tenant_index = 0;
  int priority = 1;     // 1 = highest
  double weight = 1.0;  // fairness key weight (the tenant's w_t)
};

class TaskQueue {
 public:
  virtual ~TaskQueue() = default;
  virtual void Push(const Task& task, int64_t now_us) = 0;
  // The next task that may be dispatched now, or nullopt (empty or throttled).
  virtual std::optional<Task> Pop(int64_t now_us) = 0;
  // When Pop may next succeed if it failed because of throttling; -1 if
  // empty or not throttled.
  virtual int64_t NextReadyUs(int64_t now_us) const = 0;
  virtual size_t size() const = 0;
};

class FifoTaskQueue final : public TaskQueue {
 public:
  void Push(const Task& task, int64_t now_us) override { tasks_.push_back(task); }
  std::optional<Task> Pop(int64_t now_us) override;
  int64_t NextReadyUs(int64_t now_us) const override { return -1; }
  size_t size() const override { return tasks_.size(); }

 private:
  std::deque<Task> tasks_;
};

struct TemporalQueueOptions {
  double rate_per_s = 60;  // queue-rps-limit, real dispatches per second
  double burst = 60;       // bucket capacity (about 1 s of rate)
};

class TemporalTaskQueue final : public TaskQueue {
 public:
  explicit TemporalTaskQueue(TemporalQueueOptions options);
  void Push(const Task& task, int64_t now_us) override;
  std::optional<Task> Pop(int64_t now_us) override;
  int64_t NextReadyUs(int64_t now_us) const override;
  size_t size() const override { return size_; }

 private:
  struct VirtualQueue {  // one fairness key
    double weight = 1.0;
    double current = 0;  // smooth weighted round-robin credit
    std::deque<Task> tasks;
  };
  void Refill(int64_t now_us);

  TemporalQueueOptions options_;
  double tokens_;
  int64_t last_us_ = -1;
  size_t size_ = 0;
  // priority -> (tenant -> virtual queue), both ordered for determinism.
  std::map<int, std::map<int, VirtualQueue>> levels_;
};

}  // namespace bp::loadgen
