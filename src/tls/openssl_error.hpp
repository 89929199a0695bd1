// Turning OpenSSL's thread-local error queue into a saturn::error (error.cpp). Call it on
// the thread that made the failing OpenSSL call, before any suspension: a task may resume
// on another worker, whose queue is not this one.
#pragma once

#include <saturn/result.hpp>
#include <saturn/tls/error.hpp>

#include <system_error>

namespace saturn::tls::detail {

/// The most specific error of the calling thread's OpenSSL queue (then cleared), or
/// `fallback` when the queue is empty.
error last_openssl_error(const char* operation, std::errc fallback = std::errc::protocol_error) noexcept;

}  // namespace saturn::tls::detail
