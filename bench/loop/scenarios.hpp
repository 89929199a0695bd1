// The loop suite's scenarios (docs/workloads.md, "loop"); one file each, dispatched by main.cpp.
#pragma once

#include "harness.hpp"

namespace loop_bench {

void nop_batched_128(const bench::args& a);
void nop_pingpong(const bench::args& a);
void timer_churn(const bench::args& a);
void timer_churn_kernel(const bench::args& a);
void read_4k_fixed_vs_plain(const bench::args& a);
void await_pingpong(const bench::args& a);
/// effect_direct + effect_veneer (interleaved), effect.cpp.
void effect_pure(const bench::args& a);
/// effect_io + effect_io_callback (interleaved), effect.cpp.
void effect_io(const bench::args& a);

}  // namespace loop_bench
