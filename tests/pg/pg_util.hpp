// Helpers for the pg tests: a runtime per test, connect-or-fail.
#pragma once

#include "pg/cluster.hpp"

#include <saturn/pg.hpp>
#include <saturn/task/runtime.hpp>
#include <saturn/task/time.hpp>

using saturn::task;
namespace pg = saturn::pg;
using namespace std::chrono_literals;
