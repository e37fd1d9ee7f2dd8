// Waits from error messages and bp's handling of throttled / overloaded
// answers (upstream_wait.h).
#include "bp/loadgen/upstream_wait.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "bp/decimal.h"
#include "bp/loadgen/retry_policy.h"

namespace bp::loadgen {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A non-negative decimal number at s[*at]; advances *at past it.
std::optional<double> Number(const std::string& s, size_t* at) {
  size_t end = *at;
  while (end < s.size() && (std::isdigit(static_cast<unsigned char>(s[end])) || s[end] == '.'))
    ++end;
  if (end == *at || end - *at > 24) return std::nullopt;
  const auto v = ParseDecimal(std::string_view(s).substr(*at, end - *at));
  if (!v) return std::nullopt;
  *at = end;
  return v;
}

// A Go duration at s[at]: one or more NUMBER UNIT with unit h, m, s, ms, us.
std::optional<double> GoDurationMs(const std::string& s, size_t at) {
  double total = 0;
  int parts = 0;
  while (at < s.size()) {
    size_t p = at;
    auto v = Number(s, &p);
    if (!v) break;
    double unit_ms = 0;
    if (s.compare(p, 2, "ms") == 0) {
      unit_ms = 1, p += 2;
    } else if (s.compare(p, 2, "us") == 0) {
      unit_ms = 0.001, p += 2;
    } else if (s.compare(p, 1, "h") == 0) {
      unit_ms = 3'600'000, p += 1;
    } else if (s.compare(p, 1, "m") == 0) {
      unit_ms = 60'000, p += 1;
    } else if (s.compare(p, 1, "s") == 0) {
      unit_ms = 1000, p += 1;
    } else {
      break;
    }
    total += *v * unit_ms;
    ++parts;
    at = p;
  }
  if (parts == 0) return std::nullopt;
  return total;
}

}  // namespace

std::optional<double> ParseMessageWaitMs(std::string_view message) {
  const std::string s = Lower(message.substr(0, 4096));
  const std::string kTryAgain = "try again in ", kRetryAfter = "retry after ";
  const size_t a = s.find(kTryAgain), b = s.find(kRetryAfter);
  if (a != std::string::npos && (b == std::string::npos || a < b)) {
    return GoDurationMs(s, a + kTryAgain.size());
  }
  if (b == std::string::npos) return std::nullopt;
  size_t at = b + kRetryAfter.size();
  auto v = Number(s, &at);
  if (!v) return std::nullopt;
  if (s.compare(at, 8, " seconds") == 0 || s.compare(at, 7, " second") == 0) return *v * 1000;
  if (s.compare(at, 13, " milliseconds") == 0) return *v;
  return std::nullopt;
}

BpAnswerAction BpActionForAnswer(const CallResult& r, int earlier_throttles) {
  BpAnswerAction a;
  if (r.should_retry.has_value() && !*r.should_retry) {
    a.kind = BpAnswerAction::kFail;
    return a;
  }
  if (r.status != 429 && r.status != 503 && r.status != 529) return a;  // kRetryLater
  a.kind = BpAnswerAction::kDefer;
  if (r.retry_after_paper_ms && *r.retry_after_paper_ms > 0) {
    a.source = BpAnswerAction::kHeader;
    a.wait_paper_ms = *r.retry_after_paper_ms;
  } else if (r.message_wait_paper_ms && *r.message_wait_paper_ms > 0) {
    a.source = BpAnswerAction::kMessage;
    a.wait_paper_ms = *r.message_wait_paper_ms;
  } else {
    a.source = BpAnswerAction::kBackoff;
    a.wait_paper_ms = ActivityRetryDelayMs(std::max(earlier_throttles, 0) + 1);
  }
  return a;
}

}  // namespace bp::loadgen
