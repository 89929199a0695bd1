/// \file
/// Kept so that older includes compile: the nodes now live in saturn/loop/runnable.hpp
/// (runnable, timer_node) and saturn/ext/operation.hpp (operation, kernel_timespec).
#pragma once

#include <saturn/ext/operation.hpp>
#include <saturn/loop/runnable.hpp>
