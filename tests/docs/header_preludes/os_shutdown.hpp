// wrap: task
#include <saturn/net.hpp>
#include <saturn/os.hpp>
#include <saturn/task.hpp>
#include <string>
saturn::task<saturn::result<void>> accept_loop(saturn::net::tcp_listener& l);
extern saturn::net::tcp_listener listener;
void log(const std::string& text);
