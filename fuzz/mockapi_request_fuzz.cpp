// libFuzzer target: mockapi's request handling as a pure function
// (Service::Handle), no sockets. The first byte picks the route, the rest is
// the body: chat completions, Anthropic messages, or PUT /admin/config. Any
// input must give a response with a valid status, never a crash, a leak or
// undefined behaviour (ASan). Chat bodies are also read by the fast reader
// (FastReadChat): when it accepts one, the full parser must accept it with the
// same fields. Built by scripts/fuzz.sh (BP_FUZZ=ON).
#include <cstddef>
#include <cstdint>
#include <string>

#include "bp/clock.h"
#include "bp/mockapi/service.h"
#include "internal.h"

namespace {

bp::mockapi::Service& TheService() {
  static bp::FakeClock clock(1'000'000'000);
  static std::unique_ptr<bp::mockapi::Service> service = [] {
    bp::mockapi::MockConfig c;
    c.latency = {0, 0, 0};
    bp::LimiterOptions rpm;
    rpm.dimension = bp::Dimension::kRequests;
    rpm.algorithm = bp::LimiterAlgorithm::kFixedWindow;
    rpm.limit = 1'000'000;
    rpm.window_s = 60;
    c.limits = {rpm};
    auto created = bp::mockapi::Service::Create(c, clock);
    if (!created.ok()) __builtin_trap();
    return std::move(created).value();
  }();
  return *service;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const kRoutes[][2] = {
      {"POST", "/v1/chat/completions"}, {"POST", "/v1/messages"}, {"PUT", "/admin/config"}};
  const auto& route = kRoutes[data[0] % 3];
  const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  if (route[1][1] == 'v') {  // the fast reader never disagrees with the full parser
    const bool anthropic = route[1][4] == 'm';
    bp::mockapi::internal::ChatCall fast, full;
    if (bp::mockapi::internal::FastReadChat(body, anthropic, &fast)) {
      const bp::Status st = anthropic ? bp::mockapi::internal::ParseMessages(body, &full)
                                      : bp::mockapi::internal::ParseChatCompletion(body, &full);
      if (!st.ok() || fast.model != full.model || fast.max_tokens != full.max_tokens ||
          fast.stream != full.stream || fast.include_usage != full.include_usage ||
          fast.prompt_bytes != full.prompt_bytes)
        __builtin_trap();
    }
  }
  bp::mockapi::HttpResponse r =
      TheService().Handle(bp::mockapi::HttpRequest{route[0], route[1], "", "", body});
  if (r.status < 200 || r.status > 599) __builtin_trap();
  if (route[1][1] == 'a' && r.status == 200) {
    // A successful PUT changed the config: put the fuzzing config back.
    TheService().Handle(bp::mockapi::HttpRequest{
        "PUT", "/admin/config", "", "",
        R"({"limits":[{"dimension":"requests","algorithm":"fixed_window","limit":1000000,)"
        R"("window_s":60}],"latency":{"min_ms":0,"max_ms":0,"per_output_token_ms":0},)"
        R"("completion_tokens":{"distribution":"fixed","value":20}})"});
  }
  return 0;
}
