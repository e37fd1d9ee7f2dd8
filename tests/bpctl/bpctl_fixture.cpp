#include "bpctl/bpctl_fixture.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bp/valkey.h"

namespace bp::lua {
extern const std::string_view kStateLua;
}  // namespace bp::lua

namespace bp::test {

ValkeyServer* BpctlSuite::server_ = nullptr;

void BpctlSuite::SetUpTestSuite() { server_ = new ValkeyServer(); }

void BpctlSuite::TearDownTestSuite() {
  delete server_;
  server_ = nullptr;
}

void BpctlSuite::SetUp() {
  ASSERT_TRUE(server_->running()) << server_->error();
  target_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  ASSERT_TRUE(MakeGate()->Reset().ok());
}

void BpctlSuite::TearDown() {
  std::error_code ec;
  std::filesystem::remove_all(TempDir(), ec);
}

std::string BpctlSuite::TempDir() const {
  return (std::filesystem::temp_directory_path() /
          ("bpctl-test-" + std::to_string(::getpid()) + "-" + target_))
      .string();
}

BpctlRun BpctlSuite::Bpctl(const std::vector<std::string>& args,
                           const bpctl::RunContext& context) const {
  // --create: each test's target is new (its first write makes it).
  std::vector<std::string> all = {"--valkey", server_->url(), "--target", target_, "--create"};
  all.insert(all.end(), args.begin(), args.end());
  return BpctlRaw(all, context);
}

BpctlRun BpctlSuite::BpctlRaw(const std::vector<std::string>& args,
                              const bpctl::RunContext& context) {
  std::ostringstream out, err;
  BpctlRun r;
  r.rc = bpctl::RunBpctl(args, out, err, context);
  r.out = out.str();
  r.err = err.str();
  return r;
}

nlohmann::ordered_json BpctlSuite::Export() const {
  const BpctlRun r = Bpctl({"export"});
  EXPECT_EQ(r.rc, 0) << r.err;
  return nlohmann::ordered_json::parse(r.out);
}

std::string BpctlSuite::SnapshotAs(const std::string& target) const {
  std::string text = SnapshotOf(target);
  const std::string name = "{" + target + "}";
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at)) {
    text.replace(at, name.size(), "{T}");
  }
  return text;
}

std::map<std::string, std::string> BpctlSuite::KeyNames() const {
  ValkeyConnection conn(ValkeyOptions{server_->url(), 1000, 2000});
  auto r = conn.EvalScript(lua::kStateLua, {"bp:{" + target_ + "}:state"}, {"keys"},
                           ValkeyConnection::ScriptText::kStatic);
  EXPECT_TRUE(r.ok() && r->type == ValkeyReply::Type::kArray);
  std::map<std::string, std::string> out;
  if (!r.ok()) return out;
  for (size_t i = 0; i + 1 < r->elements.size(); i += 2) {
    out[r->elements[i].AsString()] = r->elements[i + 1].AsString();
  }
  return out;
}

std::string BpctlSuite::Snapshot() const { return SnapshotOf(target_); }

std::string BpctlSuite::SnapshotOf(const std::string& target) {
  ValkeyConnection conn(ValkeyOptions{server_->url(), 1000, 2000});
  auto keys = conn.Command({"KEYS", "bp:{" + target + "}*"});
  EXPECT_TRUE(keys.ok());
  std::vector<std::string> names;
  for (const auto& k : keys->elements) names.push_back(k.str);
  std::sort(names.begin(), names.end());
  std::ostringstream o;
  for (const auto& k : names) {
    const std::string type = conn.Command({"TYPE", k})->str;
    std::vector<std::string> cmd = {"GET", k};
    if (type == "hash") cmd = {"HGETALL", k};
    if (type == "zset") cmd = {"ZRANGE", k, "0", "-1", "WITHSCORES"};
    auto v = conn.Command(cmd);
    std::vector<std::string> parts;
    if (v->type == ValkeyReply::Type::kArray) {
      for (size_t i = 0; i + 1 < v->elements.size(); i += 2) {
        parts.push_back(v->elements[i].str + "=" + v->elements[i + 1].str);
      }
      std::sort(parts.begin(), parts.end());  // hash field order is not stable
    } else {
      parts.push_back(v->AsString());
    }
    o << k << " (" << type << "):";
    for (const auto& p : parts) o << " " << p;
    o << "\n";
  }
  return o.str();
}

std::unique_ptr<GateAdmin> BpctlSuite::MakeGate(GateMode mode) const {
  GateOptions o;
  o.url = server_->url();
  o.target = target_;
  o.mode = mode;
  o.command_timeout_ms = 2000;
  return std::make_unique<GateAdmin>(o);
}

std::string BpctlSuite::WriteFile(const std::string& name, const std::string& text) const {
  std::filesystem::create_directories(TempDir());
  const auto path = std::filesystem::path(TempDir()) / name;
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace bp::test
