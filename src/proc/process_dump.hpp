// The process reader of the task dump (process_dump.cpp); slot_table.cpp installs it.
#pragma once

#include <saturn/sched/task_dump.hpp>

#include <cstdint>

namespace saturn::detail {

/// Fills `out` for a process body whose pool's workers are paused (see process_reader).
void read_process(const promise_base* p, std::uint32_t mailbox_limit, process_facts& out) noexcept;

}  // namespace saturn::detail
