// `loadgen merge` (merge_command.h) on records files written here: a path
// given twice, a missing part, a record naming no tenant and a corrupt run
// field (a negative count, a fraction, no slots, an end out of range) are refused with
// exit 2, one message line naming the path, part or row, and nothing written.
#include "bp/loadgen/merge_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bp/loadgen/records_io.h"

namespace bp::loadgen {
namespace {

namespace fs = std::filesystem;

// Part `index` of `count` of run "w naive #repeat": tenant t<index> with one
// OK activity (0.1 s to 0.2 s), started at 1e9 us.
ShardRecords TinyPart(int index, int count, int repeat = 0) {
  ShardRecords p;
  p.shard = {index, count, count, {index}};
  RunRecords& r = p.records;
  r.workload = "w";
  r.configuration = "naive";
  r.repeat = repeat;
  r.cap_requests_per_s = 10;
  r.slots = 1;
  r.end_us = 300'000;
  r.start_unix_us = 1'000'000'000;
  r.tenants = {{"t" + std::to_string(index), 1, 1.0, 1.0, 1, 0, 200'000}};
  ActivityRecord a;
  a.scheduled_us = 0;
  a.first_send_us = 100'000;
  a.final_answer_us = a.completed_us = 200'000;
  a.ok = true;
  r.activities = {a};
  r.workflows = {{0, 0, 0, 200'000}};
  return p;
}

class MergeCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("bp-merge-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    shards_ = (dir_ / "shards").string();
    out_ = (dir_ / "out").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const ShardRecords& p, const std::string& name) {
    const fs::path file = fs::path(shards_) / name;
    EXPECT_TRUE(WriteRecordsFile(file, p).ok());
    return file.string();
  }
  int Merge(std::vector<std::string> args) {
    out_text_.str("");
    err_text_.str("");
    args.insert(args.begin(), {"--no-figures", "--out", out_});
    return MergeCommand(args, out_text_, err_text_);
  }

  fs::path dir_;
  std::string shards_, out_;
  std::ostringstream out_text_, err_text_;
};

TEST_F(MergeCommandTest, APathGivenTwiceIsRefusedNothingWritten) {
  const std::string f0 = Write(TinyPart(0, 2), "shard-0.records.json");
  Write(TinyPart(1, 2), "shard-1.records.json");
  EXPECT_EQ(Merge({shards_, shards_}), 2);  // was exit 1, "4 parts for 2 processes"
  EXPECT_EQ(err_text_.str(),
            "loadgen merge: " + shards_ + " given twice\nsee loadgen merge --help\n");
  EXPECT_FALSE(fs::exists(out_));
  EXPECT_EQ(Merge({shards_, f0}), 2);
  EXPECT_EQ(err_text_.str(), "loadgen merge: " + f0 + " given twice (by " + shards_ + " and " + f0 +
                                 ")\nsee loadgen merge --help\n");
  EXPECT_EQ(Merge({f0, f0}), 2);
  EXPECT_EQ(err_text_.str(), "loadgen merge: " + f0 + " given twice\nsee loadgen merge --help\n");
  EXPECT_FALSE(fs::exists(out_));
  ASSERT_EQ(Merge({shards_}), 0) << err_text_.str();
  EXPECT_TRUE(fs::exists(fs::path(out_) / "w" / "naive" / "r0" / "summary.json"));
}

TEST_F(MergeCommandTest, AMissingPartOfOneRunWritesNoRunAtAll) {
  // Repeat 0 complete, repeat 1 without its part 1: before, r0's report was
  // written and then the merge stopped (exit 1).
  Write(TinyPart(0, 2), "r0-0.records.json");
  Write(TinyPart(1, 2), "r0-1.records.json");
  Write(TinyPart(0, 2, 1), "r1-0.records.json");
  EXPECT_EQ(Merge({shards_}), 2);
  EXPECT_EQ(err_text_.str(), "loadgen merge: w naive #1: part(s) 1/2 missing (have 0/2)\n");
  EXPECT_FALSE(fs::exists(out_));
}

TEST_F(MergeCommandTest, ARecordNamingNoTenantIsRefusedWithItsFileAndRow) {
  ShardRecords bad = TinyPart(1, 2);
  bad.records.attempts.push_back({0, 3, 100'000, 150'000, 200, false, ""});
  Write(TinyPart(0, 2), "shard-0.records.json");
  const std::string f1 = Write(bad, "shard-1.records.json");
  EXPECT_EQ(Merge({shards_}), 2);
  EXPECT_EQ(err_text_.str(), "loadgen merge: " + f1 +
                                 ": attempts[0].tenant_index: 3 names no tenant (the part has 1: "
                                 "0..0)\n");
  EXPECT_FALSE(fs::exists(out_));
}

// Taken as read, `gate_fail_opens: -7` would become 18446744073709551609 in
// the merged summary.json, 1.5 breaker opens 1, and slots -5 or 0 and end_us
// -100 or 1e18 would pass. Each is refused with the file and the field.
TEST_F(MergeCommandTest, ACorruptRunFieldIsRefusedWithItsFileAndField) {
  const std::string range = "must be an integer in [";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("gate_fail_opens": -7)", "gate_fail_opens: must be a whole count >= 0, got -7"},
      {R"("gate_breaker_opens": 1.5)", "gate_breaker_opens: must be a whole count >= 0, got 1.5"},
      {R"("gate_unreleased": "3")", "gate_unreleased: must be a whole count >= 0, got \"3\""},
      {R"("slots": -5)", "slots: " + range + "1, 100000], got -5"},
      {R"("slots": 0)", "slots: " + range + "1, 100000], got 0"},
      {R"("end_us": -100)",
       "end_us: " + range + "0, 31536000000000] (us after the run's start), got -100"},
      {R"("end_us": 1e18)",
       "end_us: " + range + "0, 31536000000000] (us after the run's start), got 1e+18"},
  };
  for (const auto& [field, why] : cases) {
    fs::remove_all(dir_);
    Write(TinyPart(0, 2), "shard-0.records.json");
    const std::string f1 = Write(TinyPart(1, 2), "shard-1.records.json");
    nlohmann::json doc = nlohmann::json::parse(std::ifstream(f1));
    const nlohmann::json edit = nlohmann::json::parse("{" + field + "}");
    doc.update(edit);
    std::ofstream(f1) << doc.dump();
    EXPECT_EQ(Merge({shards_}), 2) << field;
    EXPECT_EQ(err_text_.str(), "loadgen merge: " + f1 + ": " + why + "\n") << field;
    EXPECT_FALSE(fs::exists(out_)) << field;
  }
}

// Read with nlohmann's get<int64_t>(), 6e94 in a row (the fuzzer's input)
// was an out-of-range conversion (undefined behaviour) and 1.5 became 1.
TEST_F(MergeCommandTest, ANonIntegerInARowIsRefusedWithItsRowAndRange) {
  const std::string range = "must be an integer in [-9223372036854775808, 9223372036854775807]";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"6.0151e+94", "activities[0]: " + range + ", got 6.0151e+94"},
      {"1.5", "activities[0]: " + range + ", got 1.5"},
  };
  for (const auto& [value, why] : cases) {
    fs::remove_all(dir_);
    Write(TinyPart(0, 2), "shard-0.records.json");
    const std::string f1 = Write(TinyPart(1, 2), "shard-1.records.json");
    nlohmann::json doc = nlohmann::json::parse(std::ifstream(f1));
    ASSERT_FALSE(doc["activities"].empty());
    doc["activities"][0][5] = nlohmann::json::parse(value);  // final_answer_us
    std::ofstream(f1) << doc.dump();
    EXPECT_EQ(Merge({shards_}), 2) << value;
    EXPECT_EQ(err_text_.str(), "loadgen merge: " + f1 + ": " + why + "\n") << value;
    EXPECT_FALSE(fs::exists(out_)) << value;
  }
}

}  // namespace
}  // namespace bp::loadgen
