// wrap: function
#include <saturn/sim/run.hpp>
#include <saturn/task.hpp>
#include <chrono>
#include <cstdio>
