/// \file
/// gzip (zlib) and brotli compression of HTTP bodies: one-shot and streaming encoders and
/// decoders, the policy that says which responses to compress, and the header helpers a
/// server needs to send a compressed variant (Vary, ETag).
///
/// How a server applies it to a response whose body is complete:
///   1. if the handler already set Content-Encoding, or the status has no body (1xx, 204,
///      304) or is 206 (ranges address the identity bytes): leave the response alone;
///   2. `d = decide_compression(req.headers(), content_type, body.size(), opts)`;
///   3. if `d.vary`: add `Vary: Accept-Encoding` (merge with an existing Vary through
///      add_vary_accept_encoding) — on identity answers too, so caches keep variants apart;
///   4. if `d.coding != identity`: body = compress(d.coding, body, opts); add
///      `Content-Encoding: coding_name(d.coding)`; Content-Length is the compressed size;
///      an ETag becomes variant_etag(etag, d.coding), and If-None-Match is compared
///      against the ETag of the variant being sent. HEAD computes the same headers.
/// Streamed bodies use stream_encoder and chunked framing instead of Content-Length.
///
/// Threading: every function here is a pure computation for any thread; none suspends.
/// Compressing takes CPU time on the calling worker in proportion to the body, so a
/// server bounds the sizes it compresses per request, or precompresses static files.
#pragma once

#include <saturn/http/accept_encoding.hpp>
#include <saturn/http/content_coding.hpp>
#include <saturn/http/request.hpp>
#include <saturn/result.hpp>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace saturn::http {

/// Compression settings. The defaults suit per-request compression of dynamic content;
/// src/http/compression.cpp says why each was chosen.
struct compression_options {
  coding_offer offer{};           ///< which codings negotiation may pick
  int gzip_level = 1;             ///< zlib level 0..9 (0 stores, 9 is slowest)
  int brotli_quality = 4;         ///< brotli quality 0..11
  int brotli_window_bits = 19;    ///< brotli lgwin 10..24 (window 2^bits bytes, decoder memory too)
  std::size_t min_size = 1024;    ///< bodies smaller than this are sent as they are
};

/// The default cap on decoded bytes for decompress(): 64 MiB.
inline constexpr std::size_t default_max_decoded = std::size_t{64} << 20;

/// Compresses all of `in` with `coding` (identity returns a copy).
/// Threading: any thread; does not suspend.
result<std::string> compress(content_coding coding, std::string_view in, const compression_options& opts = {});

/// Decodes all of `in` (a complete gzip stream — several members allowed, as gzip writes
/// them — or a complete brotli stream). Errors: corrupt_input, truncated_input,
/// trailing_data, or output_limit when the decoded size would exceed `max_output` (so a
/// small "bomb" cannot make it allocate more than max_output + 1 bytes). Empty input
/// decodes to empty output. Threading: any thread; does not suspend.
result<std::string> decompress(content_coding coding, std::string_view in,
                               std::size_t max_output = default_max_decoded);

namespace detail {
class codec_state;
/// Deletes a codec_state (defined where it is complete).
struct codec_state_deleter {
  void operator()(codec_state* s) const noexcept;
};
}  // namespace detail

/// A compressor fed in pieces, for bodies produced or sent chunk by chunk. Memory is
/// bounded by the coding's state (zlib: about 256 KiB; brotli: a few times its window)
/// plus the output not yet taken: each call appends only what is ready to `out`. The
/// coders hold input back until they have a block to emit (brotli up to twice its window),
/// so a stream whose pieces must reach the peer promptly calls flush().
/// Threading: one thread at a time (it may move between threads between calls); no call
/// suspends. Move-only.
class stream_encoder {
 public:
  /// An encoder for `coding` (identity copies). Fails with invalid_options for a level,
  /// quality or window out of range, library_failure when the library cannot allocate.
  static result<stream_encoder> make(content_coding coding, const compression_options& opts = {});

  /// Compresses `in`, appending the output that is ready to `out` (maybe nothing: the
  /// coder keeps up to a block of input before it emits).
  result<void> write(std::string_view in, std::string& out);
  /// Appends output such that the peer can decode everything written so far (a zlib sync
  /// flush / brotli flush: a few bytes of overhead, and worse compression if done often).
  /// For streamed responses whose pieces must reach the client now (server-sent events).
  result<void> flush(std::string& out);
  /// Ends the stream, appending the rest of the output and the trailer. The encoder accepts
  /// no call afterwards (they fail with compression_errc::finished).
  result<void> finish(std::string& out);

  content_coding coding() const noexcept { return m_coding; }

 private:
  stream_encoder(content_coding c, detail::codec_state* s) noexcept : m_coding(c), m_state(s) {}
  content_coding m_coding;
  std::unique_ptr<detail::codec_state, detail::codec_state_deleter> m_state;
};

/// A decompressor fed in pieces (the HTTP client's bodies). Refuses to produce more than
/// `max_output` bytes in total (compression_errc::output_limit).
/// Threading: one thread at a time; no call suspends. Move-only.
class stream_decoder {
 public:
  /// A decoder for `coding` (identity copies, the limit still applies).
  static result<stream_decoder> make(content_coding coding, std::size_t max_output = default_max_decoded);

  /// Decodes `in`, appending the decoded bytes to `out`. After the end of the compressed
  /// stream, further gzip bytes must be another gzip member; further brotli bytes are an
  /// error (trailing_data).
  result<void> write(std::string_view in, std::string& out);
  /// Checks that the input ended with its stream (truncated_input otherwise; no input at
  /// all is accepted as an empty body).
  result<void> finish();
  /// True once a complete stream has been decoded.
  bool done() const noexcept;
  /// Decoded bytes produced so far.
  std::size_t total_out() const noexcept;

  content_coding coding() const noexcept { return m_coding; }

 private:
  stream_decoder(content_coding c, detail::codec_state* s) noexcept : m_coding(c), m_state(s) {}
  content_coding m_coding;
  std::unique_ptr<detail::codec_state, detail::codec_state_deleter> m_state;
};

/// True if a media type is worth compressing: text/*, JSON and XML (application/json,
/// application/xml and any +json / +xml type), JavaScript, image/svg+xml, wasm,
/// uncompressed fonts (ttf, otf, eot) and a few other textual types (see the .cpp for the
/// list). Everything else is not — in particular types that are already compressed
/// (image/* but svg, bmp and ico; audio/*, video/*; zip, gzip, brotli, zstd, 7z, rar, xz,
/// bzip2; font/woff, font/woff2; application/pdf) and types whose bytes are unknown
/// (application/octet-stream). `content_type` may carry parameters ("; charset=utf-8");
/// names compare case-insensitively. Threading: any thread.
bool compressible_type(std::string_view content_type) noexcept;

/// True if a response of this type and size should be compressed when the client accepts
/// a coding: compressible_type and body_size >= opts.min_size. Threading: any thread.
bool should_compress(std::string_view content_type, std::size_t body_size, const compression_options& opts = {}) noexcept;

/// What a server does with one response (see the file comment).
struct compression_decision {
  content_coding coding = content_coding::identity;  ///< the coding to apply
  bool vary = false;          ///< send `Vary: Accept-Encoding` (the answer depends on it)
  bool acceptable = true;     ///< false: the request refused identity and every offered coding (406)
};

/// Combines should_compress and negotiate_encoding for a response with a complete body.
/// A body the policy does not compress gets identity and no Vary. Threading: any thread.
compression_decision decide_compression(std::span<const header_field> request_headers, std::string_view content_type,
                                        std::size_t body_size, const compression_options& opts = {}) noexcept;

/// The ETag of the `coding` variant of a representation whose identity ETag is `etag`:
/// `"abc"` → `"abc-gzip"`, `W/"abc"` → `W/"abc-br"` (a different representation needs a
/// different strong validator, RFC 9110 §8.8.3). identity, or a value that is not a
/// quoted entity-tag, is returned unchanged. Threading: any thread.
std::string variant_etag(std::string_view etag, content_coding coding);

/// The Vary field value after adding Accept-Encoding to `existing` ("" → "Accept-Encoding",
/// "Origin" → "Origin, Accept-Encoding"; unchanged if it already lists it or is "*").
/// Threading: any thread.
std::string add_vary_accept_encoding(std::string_view existing);

}  // namespace saturn::http
