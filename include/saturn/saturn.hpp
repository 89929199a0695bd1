/// \file
/// The umbrella header: everything saturn offers.
#pragma once

#include <saturn/effect/effect.hpp>
#include <saturn/loop/event_loop.hpp>
#include <saturn/result.hpp>
#include <saturn/task/io.hpp>
#include <saturn/task/join_handle.hpp>
#include <saturn/task/runtime.hpp>
#include <saturn/task/task.hpp>
#include <saturn/task/this_task.hpp>
#include <saturn/task/time.hpp>
#include <saturn/sched/thread_pool.hpp>
#include <saturn/sync.hpp>
#include <saturn/net.hpp>
#include <saturn/proc.hpp>
#include <saturn/http.hpp>
