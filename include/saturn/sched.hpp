/// \file
/// The multi-threaded, work-stealing runtime: thread_pool.
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/sched/pool_stats.hpp>
#include <saturn/sched/stall.hpp>
#include <saturn/sched/task_dump.hpp>
#include <saturn/sched/thread_pool.hpp>
