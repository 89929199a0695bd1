// wrap: file
#include <saturn/metrics.hpp>
#include <saturn/sched.hpp>
