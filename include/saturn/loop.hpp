/// \file
/// The per-thread io_uring proactor: event_loop (run, post, timers, stats) and its
/// callback tier (tier A). The implementer part — raw ring operations, `operation`,
/// provided-buffer rings — is saturn/ext.hpp.
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/loop/callbacks.hpp>
#include <saturn/loop/clock.hpp>
#include <saturn/loop/event_loop.hpp>
#include <saturn/loop/runnable.hpp>
