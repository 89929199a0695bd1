// Helpers for the pg tests: the runtime they run on, connect-or-fail.
#pragma once

#include "pg/cluster.hpp"

#include <gtest/gtest.h>
#include <saturn/pg.hpp>
#include <saturn/task/runtime.hpp>
#include <saturn/task/time.hpp>

#include <optional>
#include <string>

using saturn::task;
namespace pg = saturn::pg;
using namespace std::chrono_literals;

namespace pg_test {

/// The runtime the pg tests run their queries on: one thread, made on first use, for the
/// whole test process (ctest runs each test in a process of its own).
inline saturn::runtime& rt() {
  static saturn::runtime r;
  return r;
}

/// Connects to the test cluster over TCP as `user`. A failure is recorded as a test
/// failure (with the error) and comes back empty, so a test reads
/// `auto c = co_await pg_test::connect_or_fail(); if (!c) co_return;`.
inline task<std::optional<pg::connection>> connect_or_fail(std::string user = "app") {
  auto c = co_await pg::connection::connect(cluster::get().tcp(user));
  if (!c) {
    ADD_FAILURE() << "connect as " << user << ": " << c.err().what();
    co_return std::nullopt;
  }
  co_return std::move(*c);
}

}  // namespace pg_test
