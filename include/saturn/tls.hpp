/// \file
/// TLS on the ring: contexts (certificates, ALPN, SNI, verification) and streams over
/// saturn's sockets. See tls/context.hpp and tls/stream.hpp.
#pragma once

#include <saturn/tls/context.hpp>
#include <saturn/tls/error.hpp>
#include <saturn/tls/stream.hpp>
