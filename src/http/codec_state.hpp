// The coder behind stream_encoder / stream_decoder: one subclass per (coding, direction),
// the only place zlib and brotli are called (gzip_codec.cpp, brotli_codec.cpp).
#pragma once

#include <saturn/http/compression.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace saturn::http::detail {

/// What an encoder does after consuming its input.
enum class flush_mode : unsigned char { none, sync, finish };

/// Output is appended to the caller's string in steps of at least this many bytes (or
/// the room the caller already reserved, if larger).
inline constexpr std::size_t output_step = 16 * 1024;

class codec_state {
 public:
  virtual ~codec_state() = default;
  /// Encoders: consume `in`, then apply `mode`. Decoders: consume `in` (mode is none).
  virtual result<void> run(std::string_view in, std::string& out, flush_mode mode) = 0;
  /// Decoders: a complete stream has been seen.
  virtual bool done() const noexcept { return false; }
  /// Decoders: bytes produced so far.
  virtual std::size_t total_out() const noexcept { return 0; }
  /// Decoders: at least one byte of input was fed.
  virtual bool started() const noexcept { return false; }
};

/// Grows `out` so that at least output_step bytes (or all its reserved capacity) are free
/// after its current size; returns the old size. The caller trims with resize afterwards.
inline std::size_t grow_for_output(std::string& out) {
  std::size_t old = out.size();
  std::size_t room = out.capacity() - old;
  out.resize(old + (room >= output_step ? room : output_step));
  return old;
}

// lifetime: each returns a new object owned by the caller (stream_encoder/decoder's unique_ptr).
result<codec_state*> make_gzip_encoder(const compression_options& opts, std::size_t size_hint);
result<codec_state*> make_gzip_decoder(std::size_t max_output);
result<codec_state*> make_brotli_encoder(const compression_options& opts, std::size_t size_hint);
result<codec_state*> make_brotli_decoder(std::size_t max_output);

/// An error of the compression category.
inline error compression_error(compression_errc e, const char* operation) noexcept {
  return error{make_error_code(e), operation};
}

}  // namespace saturn::http::detail
