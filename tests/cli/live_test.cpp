// `charkit live publish`: what it checks before it connects, and the local
// motion it converts (the publishing itself, against a running server, is
// tested in tests/server/ws_test.cpp, PublishLiveSendsTheMotionsFramesToViewers).
#include <gtest/gtest.h>

#include <string>

#include "charkit/core/json.h"
#include "cli_support.h"

namespace charkit::clitest {
namespace {

const std::string kBvh = quote(std::string(CHARKIT_TEST_DATA) + "/bvh/test_freebvh.bvh");

TEST(LivePublish, RefusesABadChannelOrServerBeforeConvertingAnything) {
  auto bad = run_charkit("live publish " + kBvh + " --channel 'two words' --json");
  EXPECT_EQ(bad.exit_code, 2);
  core::Json j = core::Json::parse(bad.out);
  EXPECT_EQ(j["errors"][0]["code"], "BAD_CHANNEL") << bad.out;

  auto tls =
      run_charkit("live publish " + kBvh + " --channel a --server https://example.org --json");
  EXPECT_EQ(tls.exit_code, 2);
  EXPECT_EQ(core::Json::parse(tls.out)["errors"][0]["code"], "LIVE_URL") << tls.out;

  auto path = run_charkit("live publish " + kBvh + " --channel a --server http://h:1/api --json");
  EXPECT_EQ(path.exit_code, 2);
  EXPECT_EQ(core::Json::parse(path.out)["errors"][0]["code"], "LIVE_URL") << path.out;

  auto missing = run_charkit("live publish --channel a");
  EXPECT_EQ(missing.exit_code, 2);  // MOTION is required
}

TEST(LivePublish, ConvertsALocalMotionThenReportsAServerItCannotReach) {
  // Port 1 on loopback: nothing listens there.
  auto r = run_charkit("live publish " + kBvh + " --channel a --server http://127.0.0.1:1", true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("at 30.000 fps to channel 'a'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("LIVE_CONNECT"), std::string::npos) << r.out;

  auto not_motion = run_charkit("live publish " + quote(std::string(CHARKIT_TEST_DATA) + "/bvh") +
                                    " --channel a --server http://127.0.0.1:1",
                                true);
  EXPECT_NE(not_motion.exit_code, 0) << not_motion.out;
  EXPECT_EQ(not_motion.out.find("LIVE_CONNECT"), std::string::npos) << not_motion.out;
}

}  // namespace
}  // namespace charkit::clitest
