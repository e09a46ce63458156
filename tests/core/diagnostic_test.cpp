// core::format_message (core/diagnostic.h): the one diagnostic line, and
// Report::to_text built from it. Expected lines are written out by hand.
#include "charkit/core/diagnostic.h"

#include <gtest/gtest.h>

#include <string>

#include "charkit/core/report.h"

namespace charkit::core {
namespace {

TEST(Diagnostic, EveryPartInItsPlace) {
  EXPECT_EQ(format_message(Severity::kError, "a.glb", "byte 8", "GLB_TRUNCATED", "short"),
            "a.glb: byte 8: error GLB_TRUNCATED: short");
  EXPECT_EQ(format_message(Severity::kWarning, "p.bem", "", "X", "m"), "p.bem: warning X: m");
  EXPECT_EQ(format_message(Severity::kInfo, "", "", "", "listening"), "info: listening");
  EXPECT_EQ(format_message(Severity::kError, "", "", "USAGE", "bad"), "error USAGE: bad");
}

TEST(Diagnostic, QuotedInputCannotDriveATerminal) {
  // An escape sequence and an invalid byte from a file name and a message.
  const std::string line =
      format_message(Severity::kError, "x\x1b[2J.bvh", "", "BVH_SYNTAX", "found \xff\n");
  EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_EQ(line.find('\xff'), std::string::npos) << line;
  EXPECT_NE(line.find(".bvh: error BVH_SYNTAX: found "), std::string::npos) << line;
}

TEST(Diagnostic, ReportLinesCarryTheSectionAfterTheCode) {
  Report r;
  // Issues as another module raised them (core declares neither code).
  r.add({"BEM_HEADER_FLAGS", Severity::kError, "§2", Location::at_offset(36),
         "flags is 1, expected 0"});
  r.add({"BEM_PAYLOAD_UNREFERENCED", Severity::kWarning, "", Location{},
         "payload 3 is not referenced"});
  EXPECT_EQ(r.to_text("bad.bem"),
            "bad.bem: byte 36: error BEM_HEADER_FLAGS [§2]: flags is 1, expected 0\n"
            "bad.bem: warning BEM_PAYLOAD_UNREFERENCED: payload 3 is not referenced\n");
}

}  // namespace
}  // namespace charkit::core
