// The spawn suite's scenarios, one file each.
#pragma once

#include <saturn/saturn.hpp>

#include "harness.hpp"

namespace spawn_bench {

void spawn_join_1m(const bench::args& a);
void suspended_100k(const bench::args& a, const char* self);
int suspended_child(const bench::args& a);
void yield_pingpong(const bench::args& a);

}  // namespace spawn_bench
