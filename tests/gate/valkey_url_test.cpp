// ParseValkeyUrl: every URL form, and bad input failing with its message.
#include <gtest/gtest.h>

#include "bp/valkey.h"

namespace bp {
namespace {

TEST(ValkeyUrl, HostPortDefaults) {
  auto u = ParseValkeyUrl("redis://example.local");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "example.local");
  EXPECT_EQ(u->port, 6379);
  EXPECT_EQ(u->db, 0);
  EXPECT_TRUE(u->password.empty());
}

TEST(ValkeyUrl, PasswordUserAndDb) {
  auto u = ParseValkeyUrl("redis://alice:s3cret@127.0.0.1:6380/2");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->user, "alice");
  EXPECT_EQ(u->password, "s3cret");
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, 6380);
  EXPECT_EQ(u->db, 2);
  u = ParseValkeyUrl("redis://:pw@h:1");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->user, "");
  EXPECT_EQ(u->password, "pw");
}

TEST(ValkeyUrl, UnixSocket) {
  auto u = ParseValkeyUrl("unix:///run/valkey.sock?db=3");
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE(u->unix_socket);
  EXPECT_EQ(u->path, "/run/valkey.sock");
  EXPECT_EQ(u->db, 3);
}

TEST(ValkeyUrl, BadInputFailsWithItsMessage) {
  auto u = ParseValkeyUrl("http://h");
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().message().find("redis:// or unix://"), std::string::npos);
  EXPECT_FALSE(ParseValkeyUrl("redis://h:0").ok());
  EXPECT_FALSE(ParseValkeyUrl("redis://h:70000").ok());
  EXPECT_FALSE(ParseValkeyUrl("redis://h:x").ok());
  EXPECT_FALSE(ParseValkeyUrl("redis://:6379").ok());
  EXPECT_FALSE(ParseValkeyUrl("redis://h/db").ok());
  EXPECT_FALSE(ParseValkeyUrl("unix://relative").ok());
}

}  // namespace
}  // namespace bp
