// wrap: task:saturn::result<void>
#include <saturn/net.hpp>
#include <string_view>
namespace net = saturn::net;
extern net::tcp_stream conn;
void handle(std::string_view line);
