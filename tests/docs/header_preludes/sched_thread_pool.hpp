// wrap: function
#include <saturn/sched.hpp>
#include <cstdio>
saturn::task<int> compute();
saturn::task<int> some_task();
saturn::task<> per_core_task();
