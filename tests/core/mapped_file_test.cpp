#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "charkit/core/mapped_file.h"

using charkit::core::MappedFile;

namespace {

std::string temp_file(const std::string& name, const std::string& content) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

std::string text(const MappedFile& f) {
  return std::string(reinterpret_cast<const char*>(f.bytes().data()), f.bytes().size());
}

}  // namespace

TEST(MappedFile, MapsTheBytes) {
  auto f = MappedFile::open(temp_file("charkit_map_a", "hello"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(text(*f), "hello");
}

// Move assignment releases the old mapping and takes the new one (this used
// to call the destructor explicitly, which UBSan rejects for a class with a
// virtual base).
TEST(MappedFile, MoveAssignmentReplacesTheMapping) {
  auto a = MappedFile::open(temp_file("charkit_map_b", "first"));
  auto b = MappedFile::open(temp_file("charkit_map_c", "second!"));
  ASSERT_TRUE(a.ok() && b.ok());
  MappedFile x = std::move(*a);
  x = std::move(*b);
  EXPECT_EQ(text(x), "second!");
  EXPECT_EQ(b->bytes().size(), 0u);
  MappedFile y;
  y = std::move(x);
  EXPECT_EQ(text(y), "second!");
}

TEST(MappedFile, MissingFileIsAnError) {
  auto f = MappedFile::open(::testing::TempDir() + "charkit_no_such_file");
  EXPECT_FALSE(f.ok());
}
