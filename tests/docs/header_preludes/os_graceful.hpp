// wrap: function
#include <saturn/net.hpp>
#include <saturn/os.hpp>
#include <saturn/sched.hpp>
#include <saturn/task.hpp>
#include <signal.h>
#include <chrono>
saturn::task<void> accept_loop(saturn::os::graceful_stop& gs, saturn::net::tcp_listener l);
extern saturn::thread_pool pool;
extern saturn::net::tcp_listener listener;
