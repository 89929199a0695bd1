/// \file
/// Tasks (tier B): task<T>, spawn and join_handle, the single-threaded runtime, this_task,
/// time (sleep_for, with_timeout), awaitable loop I/O, when_all, when_any and task_group.
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/result.hpp>
#include <saturn/task/await_under.hpp>
#include <saturn/task/io.hpp>
#include <saturn/task/join.hpp>
#include <saturn/task/join_handle.hpp>
#include <saturn/task/runtime.hpp>
#include <saturn/task/runtime_stats.hpp>
#include <saturn/task/task.hpp>
#include <saturn/task/task_group.hpp>
#include <saturn/task/this_task.hpp>
#include <saturn/task/time.hpp>
#include <saturn/task/when_all.hpp>
#include <saturn/task/when_any.hpp>
