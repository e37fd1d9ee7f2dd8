// bp/json_fields.h: the one JSON field reader's message shape (PATH.FIELD:
// what was expected, got VALUE; FILE: in front; line and column for syntax),
// and bp::FormatNumber (decimal.h), the one number formatter it writes with.
#include "bp/json_fields.h"

#include <gtest/gtest.h>

#include <fstream>

namespace bp {
namespace {

using nlohmann::json;

TEST(JsonSyntaxError, ValidTextIsEmpty) {
  EXPECT_EQ(JsonSyntaxError(R"({"a": [1, 2]})"), "");
  EXPECT_EQ(JsonSyntaxError("  3 "), "");
}

TEST(JsonSyntaxError, NamesLineAndColumn) {
  // A missing comma on line 3: the parser stops after the second key
  // (columns 3-5), the token it did not expect.
  EXPECT_EQ(JsonSyntaxError("{\n  \"a\": 1\n  \"b\": 2\n}\n"),
            "not valid JSON at line 3, column 5: syntax error while parsing object - unexpected "
            "string literal; expected '}'");
  // Truncated: the end of input, one past the last byte.
  EXPECT_EQ(JsonSyntaxError(R"({"caps":{)"),
            "not valid JSON at line 1, column 10: syntax error while parsing object key - "
            "unexpected end of input; expected string literal");
  EXPECT_EQ(JsonSyntaxError(""),
            "not valid JSON at line 1, column 1: syntax error while parsing value - unexpected "
            "end of input; expected '[', '{', or a literal");
}

TEST(ParseJsonText, EmptySyntaxAndDuplicateKeys) {
  EXPECT_EQ(ParseJsonText(" \n").status().message(), "empty document (expected JSON)");
  EXPECT_EQ(ParseJsonText("{\"a\":}").status().message(),
            "not valid JSON at line 1, column 6: syntax error while parsing value - unexpected "
            "'}'; expected '[', '{', or a literal");
  // Allowed by default (the last value wins), refused on request.
  EXPECT_EQ(ParseJsonText(R"({"a":1,"a":2})")->at("a"), 2);
  EXPECT_EQ(ParseJsonText(R"({"a":1,"a":2})", JsonDuplicates::kRefuse).status().message(),
            "duplicate key \"a\" (each field may appear once)");
  EXPECT_TRUE(
      ParseJsonText<nlohmann::ordered_json>(R"({"a":{"x":1},"b":{"x":1}})", JsonDuplicates::kRefuse)
          .ok());
}

TEST(ReadJsonFile, NamesTheFileInEveryError) {
  const std::string dir = ::testing::TempDir();
  EXPECT_EQ(ReadJsonFile(dir + "/no-such.json", "workload").status().ToString(),
            "NotFound: " + dir + "/no-such.json: cannot read the workload file");
  EXPECT_EQ(ReadJsonFile(dir, "workload").status().message(),
            dir + ": is a directory, not a workload file");
  const std::string bad = dir + "/json_fields_bad.json";
  std::ofstream(bad) << "{\n  \"a\": 1,\n}\n";
  EXPECT_EQ(ReadJsonFile(bad, "workload").status().ToString(),
            "InvalidArgument: " + bad +
                ": not valid JSON at line 3, column 1: syntax error while parsing object key - "
                "unexpected '}'; expected string literal");
  const std::string good = dir + "/json_fields_good.json";
  std::ofstream(good) << R"({"a": [1]})";
  EXPECT_EQ(ReadJsonFile(good, "workload")->at("a")[0], 1);
}

TEST(JsonFields, ReadsTypedFieldsAndKeepsTheFirstError) {
  const json j = json::parse(
      R"({"n": 3, "x": 0.5, "s": "hi", "b": true, "e": "flat", "big": 18446744073709551615})");
  JsonFields r(j, "gate");
  int n = 0;
  double x = 0;
  std::string s;
  bool b = false;
  int e = 0;
  r.Int("n", 1, 5, &n, Need::kRequired);
  r.NumberIn("x", 0, 1, &x);
  r.String("s", &s, Need::kRequired, /*non_empty=*/true);
  r.Bool("b", &b);
  r.Enum("e", &e, {"hier", "flat"});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(n, 3);
  EXPECT_EQ(x, 0.5);
  EXPECT_EQ(s, "hi");
  EXPECT_TRUE(b);
  EXPECT_EQ(e, 1);
  int64_t big = 7;
  r.Int("big", 0, INT64_MAX, &big);  // 2^64 - 1 does not wrap to -1
  EXPECT_EQ(r.error(),
            "gate.big: must be an integer in [0, 9223372036854775807], got "
            "18446744073709551615");
  EXPECT_EQ(big, 7);     // unchanged
  r.Int("n", 4, 5, &n);  // a second error is not recorded
  EXPECT_EQ(r.status().ToString(), "InvalidArgument: " + r.error());
}

TEST(JsonFields, OneMessageShapePerCheck) {
  struct Case {
    const char* doc;
    const char* message;
  };
  const Case cases[] = {
      {R"([1])", "document: must be a JSON object"},
      {R"({})", "n: missing (required)"},
      {R"({"n": 1.5})", "n: must be an integer in [1, 5], got 1.5"},
      {R"({"n": 2, "x": "1"})", "x: must be a number in (0, 1), got \"1\""},
      {R"({"n": 2, "x": 1})", "x: must be a number in (0, 1), got 1"},
      {R"({"n": 2, "y": 0})", "y: must be a finite number > 0, got 0"},
      {R"({"n": 2, "s": ""})", "s: must be a non-empty string, got \"\""},
      {R"({"n": 2, "b": 1})", "b: must be true or false, got 1"},
      {R"({"n": 2, "e": "tree"})", "e: must be hier | flat, got \"tree\""},
      {R"({"n": 2, "typo": 1})", "typo: unknown field"},
  };
  for (const Case& c : cases) {
    const json j = json::parse(c.doc);
    JsonFields r(j, "");
    r.OnlyKeys({"n", "x", "y", "s", "b", "e"});
    int n = 0, e = 0;
    double x = 0.5, y = 1;
    std::string s;
    bool b = false;
    r.Int("n", 1, 5, &n, Need::kRequired);
    r.Number("x", NumberRange{0, 1, true, true}, &x);
    r.Number("y", Above(0), &y);
    r.String("s", &s, Need::kOptional, /*non_empty=*/true);
    r.Bool("b", &b);
    r.Enum("e", &e, {"hier", "flat"});
    EXPECT_EQ(r.error(), c.message) << c.doc;
  }
  // A nested reader names its path.
  const json inner = json::parse(R"({"port": "80"})");
  JsonFields listen(inner, "listen");
  int port = 0;
  listen.Int("port", 0, 65535, &port);
  EXPECT_EQ(listen.error(), "listen.port: must be an integer in [0, 65535], got \"80\"");
  JsonFields row(json(3), "tenants[2]");
  EXPECT_EQ(row.error(), "tenants[2]: must be an object");
}

TEST(FormatNumber, ShortestTextThatReadsBack) {
  EXPECT_EQ(FormatNumber(60), "60");
  EXPECT_EQ(FormatNumber(0.5), "0.5");
  EXPECT_EQ(FormatNumber(100.0 / 60), "1.6666666666666667");
  EXPECT_EQ(FormatNumber(1e-6), "1e-06");
  EXPECT_EQ(FormatNumber(86'400'000), "8.64e+07");
  EXPECT_EQ(FormatNumber(1e9), "1e+09");
  EXPECT_EQ(FormatNumber(1234567), "1234567");  // seven digits: "%g" would write 1.23457e+06
  // Six digits, printf's "%g", for labels.
  EXPECT_EQ(FormatShort(100.0 / 6), "16.6667");
  EXPECT_EQ(FormatShort(1e6), "1e+06");
  EXPECT_EQ(RangeText({0, 86'400'000, true}), "(0, 8.64e+07]");
  EXPECT_EQ(RangeText({1e-6, 1e6}), "[1e-06, 1e+06]");
  EXPECT_EQ(RangeText(AtLeast(0)), ">= 0");
  // Plain: what bp::ParseDecimal reads back, for ranges a user types.
  EXPECT_EQ(FormatNumber(1e-6, 17, Notation::kPlain), "0.000001");
  EXPECT_EQ(FormatNumber(1e12, 17, Notation::kPlain), "1000000000000");
  EXPECT_EQ(FormatNumber(0.7, 17, Notation::kPlain), "0.7");
  EXPECT_EQ(*ParseDecimal(FormatNumber(100.0 / 60, 17, Notation::kPlain)), 100.0 / 60);
  EXPECT_EQ(RangeText({1e-3, 1e9}, Notation::kPlain), "[0.001, 1000000000]");
  EXPECT_TRUE(InRange(1, {0, 1}));
  EXPECT_FALSE(InRange(1, {0, 1, false, true}));
}

}  // namespace
}  // namespace bp
