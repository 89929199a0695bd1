// wrap: function
#include <saturn/sched.hpp>
