// wrap: function
#include <saturn/sched.hpp>
#include <cstdio>
