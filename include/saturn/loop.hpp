/// \file
/// The per-thread io_uring proactor (tier A): event_loop, its operation / runnable /
/// timer nodes, and provided-buffer rings.
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/loop/buf_ring.hpp>
#include <saturn/loop/event_loop.hpp>
#include <saturn/loop/operation.hpp>
