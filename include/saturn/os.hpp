/// \file
/// The os module: the process's relations with the operating system, as awaitables over
/// ring operations: SIGINT / SIGTERM as a shutdown event, child processes (command, child,
/// pipe_stream).
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/os/child.hpp>
#include <saturn/os/command.hpp>
#include <saturn/os/pipe_stream.hpp>
#include <saturn/os/shutdown.hpp>
