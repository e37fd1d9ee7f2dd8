// Task queue orders (task_queue.h).
#include "bp/loadgen/task_queue.h"

#include <algorithm>
#include <cmath>

namespace bp::loadgen {

std::optional<Task> FifoTaskQueue::Pop(int64_t now_us) {
  if (tasks_.empty()) return std::nullopt;
  Task t = tasks_.front();
  tasks_.pop_front();
  return t;
}

TemporalTaskQueue::TemporalTaskQueue(TemporalQueueOptions options)
    : options_(options), tokens_(options.burst) {}

void TemporalTaskQueue::Refill(int64_t now_us) {
  if (last_us_ >= 0 && now_us > last_us_) {
    tokens_ = std::min(options_.burst, tokens_ + options_.rate_per_s *
                                                     static_cast<double>(now_us - last_us_) / 1e6);
  }
  if (now_us > last_us_) last_us_ = now_us;
}

void TemporalTaskQueue::Push(const Task& task, int64_t now_us) {
  VirtualQueue& q = levels_[task.priority][task.tenant_index];
  q.weight = task.weight > 0 ? task.weight : 1.0;
  q.tasks.push_back(task);
  ++size_;
}

std::optional<Task> TemporalTaskQueue::Pop(int64_t now_us) {
  Refill(now_us);
  if (size_ == 0 || tokens_ < 1.0) return std::nullopt;
  for (auto& [priority, queues] : levels_) {
    // Smooth weighted round-robin over the backlogged virtual queues:
    // each gains its weight, the richest is served and pays the total.
    double total = 0;
    VirtualQueue* best = nullptr;
    for (auto& [tenant, q] : queues) {
      if (q.tasks.empty()) {
        q.current = 0;  // an idle fairness key keeps no credit
        continue;
      }
      q.current += q.weight;
      total += q.weight;
      if (!best || q.current > best->current) best = &q;
    }
    if (!best) continue;
    best->current -= total;
    Task t = best->tasks.front();
    best->tasks.pop_front();
    --size_;
    tokens_ -= 1.0;  // 1 -> 0 tokens per dispatch: every task costs the same
    return t;
  }
  return std::nullopt;
}

int64_t TemporalTaskQueue::NextReadyUs(int64_t now_us) const {
  if (size_ == 0 || tokens_ >= 1.0) return -1;
  double wait_s = (1.0 - tokens_) / options_.rate_per_s;
  return std::max(now_us, last_us_) + static_cast<int64_t>(std::ceil(wait_s * 1e6));
}

}  // namespace bp::loadgen
