/// \file
/// The sync module: coordination between tasks (and plain threads). Every wait suspends
/// the task, never the thread, allocates nothing, and is cancellable by the task's stop
/// token (with_timeout, when_any and task groups set one).
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/sync/channel.hpp>
#include <saturn/sync/event.hpp>
#include <saturn/sync/latch.hpp>
#include <saturn/sync/mutex.hpp>
#include <saturn/sync/oneshot.hpp>
#include <saturn/sync/semaphore.hpp>
#include <saturn/sync/wait_group.hpp>
