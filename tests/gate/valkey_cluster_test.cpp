// Cluster routing pieces that need no server: the key hash (CRC16/XMODEM and
// hash tags, against the Redis Cluster specification's values), the
// redis+cluster:// URL, MOVED/ASK replies and CLUSTER SLOTS parsing; and the
// message when every seed refuses (closed loopback ports).
#include "bp/valkey_cluster.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "bp/valkey.h"
#include "support/valkey_server.h"

namespace bp {
namespace {

TEST(ClusterKeySlot, Crc16XmodemCheckValue) {
  // The CRC-16/XMODEM check value, quoted by the cluster spec.
  EXPECT_EQ(Crc16Xmodem("123456789"), 0x31C3);
  EXPECT_EQ(Crc16Xmodem(""), 0);
}

TEST(ClusterKeySlot, KnownSlots) {
  EXPECT_EQ(KeySlot("foo"), 12182);
  EXPECT_EQ(KeySlot("123456789"), 12739);
  EXPECT_EQ(KeySlot("bar"), 5061);
  EXPECT_EQ(KeySlot(""), 0);
}

TEST(ClusterKeySlot, HashTags) {
  // Only the bytes between the first '{' and the next '}' are hashed.
  EXPECT_EQ(KeySlot("{123456789}:anything"), 12739);
  EXPECT_EQ(KeySlot("bp:{foo}:state"), KeySlot("foo"));
  EXPECT_EQ(KeySlot("bp:{foo}:tk:17"), 12182);
  EXPECT_EQ(KeySlot("{user1000}.following"), KeySlot("{user1000}.followers"));
  // Empty tag or no closing brace: the whole key is hashed.
  EXPECT_EQ(KeySlot("{}foo"), Crc16Xmodem("{}foo") % 16384);
  EXPECT_EQ(KeySlot("{foo"), Crc16Xmodem("{foo") % 16384);
  // First '{' and the first '}' after it.
  EXPECT_EQ(KeySlot("foo{{bar}}zap"), KeySlot("{bar"));
  EXPECT_EQ(KeySlot("foo{bar}{zap}"), KeySlot("bar"));
}

TEST(ClusterUrl, SeedsAndCredentials) {
  auto u = ParseValkeyUrl("redis+cluster://alice:pw@10.0.0.1:7000,10.0.0.2,h3:7002");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_TRUE(u->cluster);
  ASSERT_EQ(u->seeds.size(), 3u);
  EXPECT_EQ(u->seeds[0], (std::pair<std::string, int>{"10.0.0.1", 7000}));
  EXPECT_EQ(u->seeds[1], (std::pair<std::string, int>{"10.0.0.2", 6379}));
  EXPECT_EQ(u->seeds[2], (std::pair<std::string, int>{"h3", 7002}));
  EXPECT_EQ(u->host, "10.0.0.1");
  EXPECT_EQ(u->port, 7000);
  EXPECT_EQ(u->user, "alice");
  EXPECT_EQ(u->password, "pw");
  EXPECT_TRUE(ParseValkeyUrl("redis+cluster://h:1/0").ok());
  // A plain URL stays single-node, with no seeds.
  auto plain = ParseValkeyUrl("redis://h:1");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->cluster);
  EXPECT_TRUE(plain->seeds.empty());
}

TEST(ClusterUrl, BadInputFailsWithItsMessage) {
  auto u = ParseValkeyUrl("redis+cluster://h:1/2");
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().message().find("only db 0"), std::string::npos);
  EXPECT_FALSE(ParseValkeyUrl("redis+cluster://h:1,,h:2").ok());
  EXPECT_FALSE(ParseValkeyUrl("redis+cluster://h:1,h:0").ok());
  EXPECT_FALSE(ParseValkeyUrl("redis+cluster://").ok());
  EXPECT_FALSE(ParseValkeyUrl("redis://h:1,h:2").ok());  // lists only for clusters
  EXPECT_FALSE(ParseValkeyUrl("rediss+cluster://h:1").ok());
}

// Messages and logs never show a password from the URL.
TEST(ValkeyUrlRedaction, PasswordsAreMasked) {
  EXPECT_EQ(RedactValkeyUrl("redis://alice:s3cret@h:1/2"), "redis://alice:***@h:1/2");
  EXPECT_EQ(RedactValkeyUrl("redis://s3cret@h"), "redis://***@h");
  EXPECT_EQ(RedactValkeyUrl("redis://:s3cret@h:1"), "redis://:***@h:1");
  EXPECT_EQ(RedactValkeyUrl("redis+cluster://a:p@w@h:1,h:2"), "redis+cluster://a:***@h:1,h:2");
  EXPECT_EQ(RedactValkeyUrl("redis://h:1"), "redis://h:1");
  EXPECT_EQ(RedactValkeyUrl("unix:///run/v.sock"), "unix:///run/v.sock");
  EXPECT_EQ(RedactValkeyUrl("not a url"), "not a url");
  auto bad = ParseValkeyUrl("redis://alice:s3cret@h:99999");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "bad port in valkey url: redis://alice:***@h:99999");
  // A refused connection names the URL without its password.
  ValkeyConnection conn(ValkeyOptions{
      "redis://alice:s3cret@127.0.0.1:" + std::to_string(test::FreeLoopbackPort()), 100, 100});
  const Status s = conn.Connect();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().find("s3cret"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("redis://alice:***@127.0.0.1:"), std::string::npos) << s.message();
}

// Every seed refusing: one message naming each seed with its own error, in
// URL order (closed loopback ports), and no password.
TEST(ClusterSeeds, EverySeedFailingIsReportedWithItsError) {
  std::vector<int> ports;
  std::string url = "redis+cluster://alice:s3cret@";
  for (int i = 0; i < 3; ++i) {
    int port = test::FreeLoopbackPort();
    while (std::find(ports.begin(), ports.end(), port) != ports.end()) {
      port = test::FreeLoopbackPort();
    }
    ports.push_back(port);
    url += (i ? "," : "") + std::string("127.0.0.1:") + std::to_string(port);
  }
  ValkeyConnection conn(ValkeyOptions{url, 100, 100}, "bp:{t}");
  const Status s = conn.Connect();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  std::string expected = "valkey cluster: no node answered CLUSTER SLOTS (3 tried): ";
  for (size_t i = 0; i < ports.size(); ++i) {
    const std::string addr = "127.0.0.1:" + std::to_string(ports[i]);
    expected += (i ? "; " : "") + addr + ": valkey connect redis://alice:***@" + addr +
                ": Connection refused";
  }
  EXPECT_EQ(s.message(), expected);
  // A command reconnects and fails the same way.
  auto r = conn.Command({"GET", "bp:{t}:state"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), expected);
}

ValkeyReply Error(const std::string& text) {
  ValkeyReply r;
  r.type = ValkeyReply::Type::kError;
  r.str = text;
  return r;
}

TEST(ClusterRedirect, MovedAndAsk) {
  auto m = ParseClusterRedirect(Error("MOVED 3999 127.0.0.1:6381"));
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->ask);
  EXPECT_EQ(m->slot, 3999);
  EXPECT_EQ(m->host, "127.0.0.1");
  EXPECT_EQ(m->port, 6381);
  auto a = ParseClusterRedirect(Error("ASK 12182 node-2.local:7000"));
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->ask);
  EXPECT_EQ(a->slot, 12182);
  EXPECT_EQ(a->host, "node-2.local");
  EXPECT_EQ(a->port, 7000);
  auto same_host = ParseClusterRedirect(Error("MOVED 1 :7001"));
  ASSERT_TRUE(same_host.has_value());
  EXPECT_EQ(same_host->host, "");
  EXPECT_EQ(same_host->port, 7001);
  EXPECT_FALSE(ParseClusterRedirect(Error("NOSCRIPT No matching script")).has_value());
  EXPECT_FALSE(ParseClusterRedirect(Error("MOVED 16384 h:1")).has_value());
  EXPECT_FALSE(ParseClusterRedirect(Error("MOVED x h:1")).has_value());
  EXPECT_FALSE(ParseClusterRedirect(Error("MOVED 1 h:0")).has_value());      // no port 0
  EXPECT_FALSE(ParseClusterRedirect(Error("MOVED 1 h:65536")).has_value());  // above 65535
  ValkeyReply ok;
  ok.type = ValkeyReply::Type::kStatus;
  ok.str = "MOVED 1 h:1";  // not an error reply
  EXPECT_FALSE(ParseClusterRedirect(ok).has_value());
}

ValkeyReply Int(int64_t v) {
  ValkeyReply r;
  r.type = ValkeyReply::Type::kInteger;
  r.integer = v;
  return r;
}
ValkeyReply Str(const std::string& s) {
  ValkeyReply r;
  r.type = ValkeyReply::Type::kString;
  r.str = s;
  return r;
}
ValkeyReply Arr(std::vector<ValkeyReply> e) {
  ValkeyReply r;
  r.type = ValkeyReply::Type::kArray;
  r.elements = std::move(e);
  return r;
}

TEST(ClusterSlots, PrimariesOfEachRange) {
  ValkeyReply reply = Arr({
      Arr({Int(0), Int(5460), Arr({Str("127.0.0.1"), Int(7000), Str("id0")}),
           Arr({Str("127.0.0.1"), Int(7003), Str("replica")})}),
      Arr({Int(5461), Int(16383), Arr({Str(""), Int(7001), Str("id1")})}),
  });
  auto ranges = ParseClusterSlots(reply, "10.1.1.1");
  ASSERT_TRUE(ranges.ok()) << ranges.status().ToString();
  ASSERT_EQ(ranges->size(), 2u);
  EXPECT_EQ((*ranges)[0].first, 0);
  EXPECT_EQ((*ranges)[0].last, 5460);
  EXPECT_EQ((*ranges)[0].port, 7000);        // the primary, not the replica
  EXPECT_EQ((*ranges)[1].host, "10.1.1.1");  // empty ip: the node asked
  EXPECT_EQ((*ranges)[1].last, 16383);
  EXPECT_FALSE(
      ParseClusterSlots(Arr({Arr({Int(0), Int(16384), Arr({Str("h"), Int(1)})})}), "h").ok());
  EXPECT_FALSE(ParseClusterSlots(Str("ERR This instance has cluster support disabled"), "h").ok());
}

// The bounds hold on the 64-bit integers the server sent: 2^32 + 5 is not
// slot 5, 2^32 + 7000 is not port 7000.
TEST(ClusterSlots, IntegersAboveIntAreOutOfBoundsNotWrapped) {
  const int64_t wrap = int64_t{1} << 32;
  EXPECT_FALSE(
      ParseClusterSlots(Arr({Arr({Int(wrap + 5), Int(wrap + 9), Arr({Str("h"), Int(7000)})})}), "h")
          .ok());
  EXPECT_FALSE(
      ParseClusterSlots(Arr({Arr({Int(0), Int(wrap + 16383), Arr({Str("h"), Int(7000)})})}), "h")
          .ok());
  EXPECT_FALSE(
      ParseClusterSlots(Arr({Arr({Int(0), Int(100), Arr({Str("h"), Int(wrap + 7000)})})}), "h")
          .ok());
}

}  // namespace
}  // namespace bp
