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

}  // namespace bp
