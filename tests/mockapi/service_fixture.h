// The mockapi Service on a FakeClock for the service tests: request helpers
// (Header, Limit, Chat) and the ServiceTest fixture (Start a config, then
// Post/Call requests; no sockets). Shared by service_test.cpp and
// service_input_test.cpp.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include "bp/clock.h"
#include "bp/mockapi/service.h"
#include "bp/token_estimate.h"

namespace bp::mockapi::testing {

using nlohmann::json;
inline constexpr int64_t kS = 1'000'000;

inline std::string Header(const HttpResponse& r, const std::string& name) {
  for (const auto& [n, v] : r.headers) {
    if (name == n) return v;
  }
  return "<absent>";
}

inline LimiterOptions Limit(Dimension d, LimiterAlgorithm a, int64_t limit, double window_s) {
  LimiterOptions o;
  o.dimension = d;
  o.algorithm = a;
  o.limit = limit;
  o.window_s = window_s;
  return o;
}

inline std::string Chat(int64_t prompt_tokens, const std::string& extra = "") {
  return R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":")" +
         TextOfTokens(prompt_tokens) + "\"}]" + extra + "}";
}

class ServiceTest : public ::testing::Test {
 protected:
  void Start(MockConfig c) {
    c.latency = {0, 0, 0};
    auto s = Service::Create(c, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    service_ = std::move(*s);
  }
  HttpResponse Post(const std::string& path, const std::string& body, std::string_view auth = "") {
    HttpRequest r;
    r.method = "POST";
    r.target = path;
    r.body = body;
    r.authorization = auth;
    return service_->Handle(r);
  }
  HttpResponse Call(std::string_view method, std::string_view path, std::string_view body = "") {
    HttpRequest r;
    r.method = method;
    r.target = path;
    r.body = body;
    return service_->Handle(r);
  }

  FakeClock clock_{1000 * kS + 250'000};  // 1000.25 s: 19.75 s before a minute edge
  std::unique_ptr<Service> service_;
};

}  // namespace bp::mockapi::testing
