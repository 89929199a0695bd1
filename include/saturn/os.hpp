/// \file
/// The os module: the process's relations with the operating system, as awaitables over
/// ring operations (today: SIGINT / SIGTERM as a shutdown event).
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/os/shutdown.hpp>
