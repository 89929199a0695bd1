// wrap: function
#include <saturn/proc.hpp>
#include <saturn/sched.hpp>
#include <chrono>
saturn::process<int> worker_body();
extern saturn::thread_pool pool;
