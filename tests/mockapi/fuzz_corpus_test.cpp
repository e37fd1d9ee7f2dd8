// The stored fuzz inputs (tests/fuzz/corpus/, seeds and regression inputs of
// scripts/fuzz.sh) replayed in the normal build: every request input gets a
// response with a valid status, every config input loads or fails with a
// message, and a loaded config prints and loads back to the same JSON.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "bp/mockapi/config.h"
#include "bp/mockapi/service.h"

namespace bp::mockapi {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Inputs(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e :
       fs::directory_iterator(fs::path(BP_SOURCE_DIR) / "tests/fuzz/corpus" / dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    out.push_back(s.str());
  }
  return out;
}

TEST(FuzzCorpus, RequestInputsGetAnAnswer) {
  FakeClock clock(1'000'000'000);
  MockConfig c;
  c.latency = {0, 0, 0};
  auto service = Service::Create(c, clock);
  ASSERT_TRUE(service.ok());
  const auto inputs = Inputs("mockapi_request");
  ASSERT_GE(inputs.size(), 3u);
  const char* const routes[][2] = {
      {"POST", "/v1/chat/completions"}, {"POST", "/v1/messages"}, {"PUT", "/admin/config"}};
  for (const std::string& input : inputs) {
    if (input.empty()) continue;
    const auto& route = routes[static_cast<uint8_t>(input[0]) % 3];
    HttpResponse r = (*service)->Handle(HttpRequest{route[0], route[1], "", "", input.substr(1)});
    EXPECT_GE(r.status, 200) << input;
    EXPECT_LE(r.status, 599) << input;
  }
}

TEST(FuzzCorpus, ConfigInputsLoadAndRoundTrip) {
  const auto inputs = Inputs("mockapi_config");
  ASSERT_GE(inputs.size(), 1u);
  for (const std::string& input : inputs) {
    const auto j = nlohmann::json::parse(input, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) continue;
    auto cfg = ConfigFromJson(j, MockConfig{});
    if (!cfg.ok()) {
      EXPECT_FALSE(cfg.status().message().empty());
      continue;
    }
    auto again = ConfigFromJson(ConfigToJson(*cfg), MockConfig{});
    ASSERT_TRUE(again.ok()) << again.status().message();
    EXPECT_EQ(ConfigToJson(*again), ConfigToJson(*cfg));
  }
}

}  // namespace
}  // namespace bp::mockapi
