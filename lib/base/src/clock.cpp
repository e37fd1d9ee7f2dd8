#include "bp/clock.h"

#include <chrono>

namespace bp {

int64_t SystemClock::NowUs() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const SystemClock& SystemClock::Instance() {
  static const SystemClock* clock = new SystemClock();
  return *clock;
}

int64_t SteadyClock::NowUs() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const SteadyClock& SteadyClock::Instance() {
  static const SteadyClock* clock = new SteadyClock();
  return *clock;
}

}  // namespace bp
