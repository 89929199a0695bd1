// wrap: task:saturn::result<void>
#include <saturn/net.hpp>
namespace net = saturn::net;
void use(const net::address& a);
