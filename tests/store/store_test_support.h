// Shared fixture of the store tests: every catalogue test runs on SQLite
// (a fresh file) and on PostgreSQL (a fresh schema in the database named by
// CHARKIT_TEST_PG_URL; the ctest fixture in CMakeLists.txt starts a server).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>

#include "charkit/store/catalogue.h"

namespace charkit::store::testing {

enum class Backend { sqlite, postgresql };

inline void PrintTo(Backend b, std::ostream* os) {
  *os << (b == Backend::sqlite ? "sqlite" : "postgresql");
}

inline std::string backend_name(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::sqlite ? "sqlite" : "postgresql";
}

inline std::filesystem::path fresh_dir(const std::string& tag) {
  static std::atomic<int> counter{0};
  auto dir =
      std::filesystem::temp_directory_path() /
      ("charkit_store_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// Base fixture: a temporary folder, a settable clock, and catalogue URLs.
class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    dir_ = fresh_dir("t");
    if (GetParam() == Backend::postgresql) {
      const char* url = std::getenv("CHARKIT_TEST_PG_URL");
      if (!url || !*url)
        GTEST_SKIP() << "CHARKIT_TEST_PG_URL is not set; the PostgreSQL variant needs a server "
                        "(ctest starts one with scripts/pg_test_server)";
      // ctest points PGSERVICEFILE at the fixture's server; no file: it did not start
      // (scripts/pg_test_server exits 77 when PostgreSQL is not installed).
      if (const char* svc = std::getenv("PGSERVICEFILE"); svc && !std::filesystem::exists(svc))
        GTEST_SKIP() << "no PostgreSQL test server (" << svc << " missing)";
      url_ = url;
      static std::atomic<int> counter{0};
      schema_ =
          "t_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" +
          std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 100000);
    } else {
      url_ = "sqlite:" + (dir_ / "catalogue.db").string();
    }
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  CatalogueOptions options() {
    CatalogueOptions o;
    o.pg_schema = schema_;
    o.now = [this] {
      return std::chrono::system_clock::time_point(std::chrono::milliseconds(clock_ms_.load()));
    };
    return o;
  }
  /// A new connection to this test's catalogue (migrated).
  std::unique_ptr<Catalogue> open_catalogue() {
    auto c = Catalogue::open(url_, options());
    if (!c) {
      ADD_FAILURE() << "open " << url_ << ": " << c.error().to_string();
      return nullptr;
    }
    return std::move(*c);
  }

  std::filesystem::path dir_;
  std::string url_;
  std::string schema_;
  std::atomic<std::int64_t> clock_ms_{1'700'000'000'000};  // 2023-11-14T22:13:20Z
};

}  // namespace charkit::store::testing
