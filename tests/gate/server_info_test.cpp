// Which server the tests run on: the lookup order of FindValkeyBinary (the
// mirror of scripts/lib/servers.sh's bp_server_bin), ServerFromInfo on INFO
// texts of both servers, and GateAdmin::Server naming the server the test
// support started, as its own --version says.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "bp/gate_admin.h"
#include "bp/valkey.h"
#include "support/valkey_server.h"

namespace bp::test {
namespace {

// INFO server as Valkey 9.1.2 and Redis 7.0.15 answer it (abridged, CRLF).
constexpr const char* kValkeyInfo =
    "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:9.1.2\r\n"
    "valkey_release_stage:ga\r\nredis_mode:standalone\r\n";
constexpr const char* kRedisInfo =
    "# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\nredis_mode:standalone\r\n";

TEST(ServerFromInfo, ValkeyVersionWinsOverItsCompatibilityRedisVersion) {
  EXPECT_EQ(ServerFromInfo(kValkeyInfo), "valkey 9.1.2");
}

TEST(ServerFromInfo, RedisAndNeither) {
  EXPECT_EQ(ServerFromInfo(kRedisInfo), "redis 7.0.15");
  EXPECT_EQ(ServerFromInfo("# Server\nredis_version:7.0.15\n"), "redis 7.0.15");  // LF only
  EXPECT_EQ(ServerFromInfo("# Server\r\nredis_versions:1\r\nxredis_version:2\r\n"), "");
  EXPECT_EQ(ServerFromInfo(""), "");
}

// Sets environment variables for one test and restores them after.
class ScopedEnv {
 public:
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  void Set(const std::string& name, const char* value) {
    if (!saved_.count(name)) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value) {
      ::setenv(name.c_str(), value, 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

void MakeExecutable(const std::filesystem::path& p) {
  std::ofstream(p) << "#!/bin/sh\n";
  ::chmod(p.c_str(), 0755);
}

TEST(FindValkeyBinary, SetupsCacheComesBeforePathAndRedisIsForcedByName) {
  const std::filesystem::path cache =
      std::filesystem::temp_directory_path() / ("bp-lookup-" + std::to_string(::getpid()));
  std::filesystem::create_directories(cache / "backpressure/valkey-9/bin");
  const std::string server = (cache / "backpressure/valkey-9/bin/valkey-server").string();
  MakeExecutable(server);
  ScopedEnv env;
  env.Set("BP_SERVER", nullptr);
  env.Set("BP_VALKEY_BIN", nullptr);
  env.Set("XDG_CACHE_HOME", cache.c_str());
  EXPECT_EQ(ValkeyCacheDir(), (cache / "backpressure/valkey-9").string());
  EXPECT_EQ(FindValkeyBinary(), server);
  // No valkey-cli beside it: one on PATH.
  EXPECT_NE(FindValkeyCli(), (cache / "backpressure/valkey-9/bin/valkey-cli").string());
  MakeExecutable(cache / "backpressure/valkey-9/bin/valkey-cli");
  EXPECT_EQ(FindValkeyCli(), (cache / "backpressure/valkey-9/bin/valkey-cli").string());

  env.Set("BP_VALKEY_BIN", "/nonexistent/valkey-server");
  EXPECT_EQ(FindValkeyBinary(), "");  // named but missing: no silent fallback
  const std::string other = (cache / "other-server").string();
  MakeExecutable(other);
  env.Set("BP_VALKEY_BIN", other.c_str());
  EXPECT_EQ(FindValkeyBinary(), other);

  env.Set("BP_SERVER", "redis");  // wins over both (scripts/setup.sh installs redis-server)
  const std::string redis = FindValkeyBinary();
  EXPECT_EQ(std::filesystem::path(redis).filename(), "redis-server");
  EXPECT_EQ(std::filesystem::path(FindValkeyCli()).filename(), "redis-cli");
  env.Set("BP_SERVER", "memcached");
  EXPECT_EQ(FindValkeyBinary(), "");
  std::filesystem::remove_all(cache);
}

// "valkey 9.1.2" from "Valkey server v=9.1.2 sha=..." (redis likewise).
std::string VersionOfBinary(const std::string& binary) {
  FILE* p = ::popen((binary + " --version").c_str(), "r");
  if (!p) return "";
  char line[512] = {};
  const bool read = std::fgets(line, sizeof line, p) != nullptr;
  ::pclose(p);
  if (!read) return "";
  const std::string s = line;
  const size_t v = s.find(" v=");
  if (v == std::string::npos) return "";
  const std::string version = s.substr(v + 3, s.find(' ', v + 3) - v - 3);
  return (s.rfind("Valkey", 0) == 0 ? "valkey " : "redis ") + version;
}

TEST(GateAdminServer, NamesTheServerTheTestsStarted) {
  ValkeyServer server;
  ASSERT_TRUE(server.running()) << server.error();
  const std::string expected = VersionOfBinary(FindValkeyBinary());
  ASSERT_FALSE(expected.empty()) << FindValkeyBinary();
  GateAdmin admin(GateOptions{.url = server.url(), .target = "server-info"});
  auto named = admin.Server();
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  EXPECT_EQ(*named, expected);
}

TEST(GateAdminServer, UnreachableIsUnavailable) {
  GateAdmin admin(GateOptions{.url = "redis://127.0.0.1:" + std::to_string(FreeLoopbackPort()),
                              .target = "server-info"});
  auto named = admin.Server();
  ASSERT_FALSE(named.ok());
  EXPECT_EQ(named.status().code(), StatusCode::kUnavailable) << named.status().ToString();
}

}  // namespace
}  // namespace bp::test
