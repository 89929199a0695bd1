/// \file
/// The os module: the process's relations with the operating system, as awaitables over
/// ring operations: signals through a signalfd on the ring (signal_set), SIGINT / SIGTERM
/// as a shutdown event, a server's graceful stop, and child processes (command, child,
/// pipe_stream).
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/os/child.hpp>
#include <saturn/os/command.hpp>
#include <saturn/os/graceful.hpp>
#include <saturn/os/pipe_stream.hpp>
#include <saturn/os/shutdown.hpp>
#include <saturn/os/signal.hpp>
