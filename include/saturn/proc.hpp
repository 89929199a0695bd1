/// \file
/// Processes: spawn, mailboxes with selective receive, links, monitors, a registry and a
/// supervisor (include/saturn/proc/).
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/proc/pid.hpp>
#include <saturn/proc/proc_stats.hpp>
#include <saturn/proc/process.hpp>
#include <saturn/proc/registry.hpp>
#include <saturn/proc/send.hpp>
#include <saturn/proc/spawn.hpp>
#include <saturn/proc/supervisor.hpp>
