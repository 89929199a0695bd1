/// \file
/// The os module: the process's relations with the operating system, as awaitables over
/// ring operations (signals through a signalfd on the ring, SIGINT / SIGTERM as a shutdown event, and
/// a server's graceful stop).
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/os/graceful.hpp>
#include <saturn/os/shutdown.hpp>
#include <saturn/os/signal.hpp>
