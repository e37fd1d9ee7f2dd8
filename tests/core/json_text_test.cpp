// JsonSyntaxError (bp/json_text.h): the position of the first syntax error,
// 1-based line and byte column, in the wording every binary prints.
#include "bp/json_text.h"

#include <gtest/gtest.h>

namespace bp {
namespace {

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

}  // namespace
}  // namespace bp
