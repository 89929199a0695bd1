// wrap: task:saturn::result<void>
#include <saturn/net.hpp>
#include <saturn/tls.hpp>
#include <chrono>
#include <cstddef>
#include <span>
extern saturn::tls::context ctx;
extern saturn::result<saturn::net::tcp_stream> tcp;
extern std::span<const std::byte> bytes;
extern std::span<std::byte> buf;
