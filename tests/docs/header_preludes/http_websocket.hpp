// wrap: task
#include <saturn/http.hpp>
#include <saturn/net.hpp>
#include <cstddef>
#include <span>
namespace websocket = saturn::http::websocket;
namespace net = saturn::net;
extern net::tcp_stream stream;
inline std::span<const std::byte> leftover_bytes;
