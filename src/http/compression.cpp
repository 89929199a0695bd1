// Coding names, the compression error category, stream_encoder / stream_decoder over the
// codec states, and the one-shot compress / decompress built on them.
//
// Default settings (compression_options), chosen for compressing per request:
// - gzip level 1, as nginx's gzip_comp_level default. zlib levels 1..3 use its greedy
//   matcher, 4..9 the lazy one; level 6 (zlib's, Go's and Apache's default) takes a few
//   times the CPU of level 1 for smaller output. A server compressing each response pays
//   that on every request, and clients that care most about bytes accept br, which gets
//   level 6's size for little more than level 1's CPU. Content worth level 9 is static
//   and should be compressed once, ahead of time.
// - brotli quality 4: qualities 0..4 use brotli's fast hashers, 5..9 slower ones, and
//   10..11 (the library default, 11) an optimal parse meant for precompression that is
//   orders of magnitude too slow per request; 4..5 is the usual choice for dynamic content.
// - brotli window 2^19 (512 KiB), as ngx_brotli's brotli_window default: the window bounds
//   the encoder's memory and the memory a client must give the decoder; bodies compressed
//   per request rarely gain from a longer one.
// - min_size 1024: a smaller body with its head fits in one TCP segment whatever its
//   coding, so compressing it saves no packet, and zlib's per-stream setup (allocating its
//   state, clearing its hash table) costs more than the bytes it saves.
#include <saturn/http/compression.hpp>

#include "http/codec_state.hpp"

#include <cstdint>
#include <string>

namespace saturn::http {

std::string_view coding_name(content_coding c) noexcept {
  switch (c) {
    case content_coding::gzip:
      return "gzip";
    case content_coding::br:
      return "br";
    case content_coding::identity:
      break;
  }
  return "identity";
}

std::optional<content_coding> parse_coding(std::string_view token) noexcept {
  if (iequals(token, "gzip") || iequals(token, "x-gzip"))
    return content_coding::gzip;
  if (iequals(token, "br"))
    return content_coding::br;
  if (iequals(token, "identity"))
    return content_coding::identity;
  return std::nullopt;
}

namespace {

class compression_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "compression"; }
  std::string message(int c) const override {
    switch (static_cast<compression_errc>(c)) {
      case compression_errc::corrupt_input:
        return "the compressed data is corrupt (not a valid stream of its coding)";
      case compression_errc::truncated_input:
        return "the compressed data ends before the end of its stream";
      case compression_errc::trailing_data:
        return "bytes follow the end of the compressed stream";
      case compression_errc::output_limit:
        return "the decoded data exceeds the size limit (raise max_output if it is legitimate)";
      case compression_errc::invalid_options:
        return "a compression level, quality or window size is out of range";
      case compression_errc::finished:
        return "the coder was already finished or failed; make a new one";
      case compression_errc::library_failure:
        return "the compression library failed (out of memory?)";
    }
    return "unknown compression error";
  }
};

/// identity: copies, and for decoding enforces the same output limit as the real codings.
class identity_state final : public detail::codec_state {
 public:
  explicit identity_state(std::size_t max_output) noexcept : m_max(max_output) {}
  result<void> run(std::string_view in, std::string& out, detail::flush_mode) override {
    if (!in.empty())
      m_started = true;
    if (in.size() > m_max - m_total)
      return detail::compression_error(compression_errc::output_limit, "identity decode");
    out.append(in);
    m_total += in.size();
    return {};
  }
  bool done() const noexcept override { return true; }
  std::size_t total_out() const noexcept override { return m_total; }
  bool started() const noexcept override { return m_started; }

 private:
  std::size_t m_max;
  std::size_t m_total = 0;
  bool m_started = false;
};

result<detail::codec_state*> make_encoder_state(content_coding coding, const compression_options& opts,
                                                std::size_t size_hint) {
  switch (coding) {
    case content_coding::gzip:
      return detail::make_gzip_encoder(opts, size_hint);
    case content_coding::br:
      return detail::make_brotli_encoder(opts, size_hint);
    case content_coding::identity:
      break;
  }
  return static_cast<detail::codec_state*>(new identity_state(SIZE_MAX));
}

result<detail::codec_state*> make_decoder_state(content_coding coding, std::size_t max_output) {
  switch (coding) {
    case content_coding::gzip:
      return detail::make_gzip_decoder(max_output);
    case content_coding::br:
      return detail::make_brotli_decoder(max_output);
    case content_coding::identity:
      break;
  }
  return static_cast<detail::codec_state*>(new identity_state(max_output));
}

error finished_error(content_coding c, bool encoding) noexcept {
  const char* op = c == content_coding::gzip ? (encoding ? "gzip encode" : "gzip decode")
                   : c == content_coding::br ? (encoding ? "br encode" : "br decode")
                                             : (encoding ? "identity encode" : "identity decode");
  return detail::compression_error(compression_errc::finished, op);
}

}  // namespace

const std::error_category& compression_category() noexcept {
  static const compression_category_impl category;
  return category;
}

void detail::codec_state_deleter::operator()(codec_state* s) const noexcept { delete s; }

// ---- stream_encoder: after finish() or an error the state is released, and any later
// call answers `finished`.

result<stream_encoder> stream_encoder::make(content_coding coding, const compression_options& opts) {
  auto s = make_encoder_state(coding, opts, 0);
  if (!s)
    return s.err();
  return stream_encoder(coding, *s);
}

result<void> stream_encoder::write(std::string_view in, std::string& out) {
  if (!m_state)
    return finished_error(m_coding, true);
  auto r = m_state->run(in, out, detail::flush_mode::none);
  if (!r)
    m_state.reset();
  return r;
}

result<void> stream_encoder::flush(std::string& out) {
  if (!m_state)
    return finished_error(m_coding, true);
  auto r = m_state->run({}, out, detail::flush_mode::sync);
  if (!r)
    m_state.reset();
  return r;
}

result<void> stream_encoder::finish(std::string& out) {
  if (!m_state)
    return finished_error(m_coding, true);
  auto r = m_state->run({}, out, detail::flush_mode::finish);
  m_state.reset();
  return r;
}

// ---- stream_decoder: an error is final too (the stream can no longer be trusted).

result<stream_decoder> stream_decoder::make(content_coding coding, std::size_t max_output) {
  auto s = make_decoder_state(coding, max_output);
  if (!s)
    return s.err();
  return stream_decoder(coding, *s);
}

result<void> stream_decoder::write(std::string_view in, std::string& out) {
  if (!m_state)
    return finished_error(m_coding, false);
  auto r = m_state->run(in, out, detail::flush_mode::none);
  if (!r)
    m_state.reset();
  return r;
}

result<void> stream_decoder::finish() {
  if (!m_state)
    return finished_error(m_coding, false);
  bool ok = m_state->done() || !m_state->started();
  const char* op = m_coding == content_coding::gzip ? "gzip decode" : "br decode";
  m_state.reset();
  if (!ok)
    return detail::compression_error(compression_errc::truncated_input, op);
  return {};
}

bool stream_decoder::done() const noexcept { return m_state ? m_state->done() : false; }

std::size_t stream_decoder::total_out() const noexcept { return m_state ? m_state->total_out() : 0; }

// ---- one-shot

result<std::string> compress(content_coding coding, std::string_view in, const compression_options& opts) {
  if (coding == content_coding::identity)
    return std::string(in);
  // The size hint lets zlib take a smaller window and brotli smaller buffers for small bodies.
  auto s = make_encoder_state(coding, opts, in.empty() ? 1 : in.size());
  if (!s)
    return s.err();
  std::unique_ptr<detail::codec_state, detail::codec_state_deleter> state(*s);
  std::string out;
  auto r = state->run(in, out, detail::flush_mode::finish);
  if (!r)
    return r.err();
  return out;
}

result<std::string> decompress(content_coding coding, std::string_view in, std::size_t max_output) {
  auto d = stream_decoder::make(coding, max_output);
  if (!d)
    return d.err();
  std::string out;
  auto w = d->write(in, out);
  if (!w)
    return w.err();
  auto f = d->finish();
  if (!f)
    return f.err();
  return out;
}

}  // namespace saturn::http
