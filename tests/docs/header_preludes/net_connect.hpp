// wrap: task:saturn::result<void>
#include <saturn/net.hpp>
#include <chrono>
namespace net = saturn::net;
