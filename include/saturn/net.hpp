/// \file
/// Networking on the ring: addresses, name resolution (DNS), TCP listeners and streams,
/// connect by name, UDP, Unix sockets, and a buffered reader for lines and records.
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/net/address.hpp>
#include <saturn/net/buffered_reader.hpp>
#include <saturn/net/connect.hpp>
#include <saturn/net/resolve.hpp>
#include <saturn/net/stable_text.hpp>
#include <saturn/net/stream_socket.hpp>
#include <saturn/net/tcp_listener.hpp>
#include <saturn/net/tcp_stream.hpp>
#include <saturn/net/udp_socket.hpp>
#include <saturn/net/unix_socket.hpp>
