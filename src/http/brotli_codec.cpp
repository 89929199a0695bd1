// brotli (RFC 7932) through libbrotlienc / libbrotlidec's streaming APIs
// (BrotliEncoderCompressStream, BrotliDecoderDecompressStream).
#include "http/codec_state.hpp"

#include <brotli/decode.h>
#include <brotli/encode.h>

#include <algorithm>
#include <cstdint>
#include <new>

namespace saturn::http::detail {
namespace {

const char* const encode_op = "br encode";
const char* const decode_op = "br decode";

class brotli_encoder final : public codec_state {
 public:
  brotli_encoder() noexcept : m_s(BrotliEncoderCreateInstance(nullptr, nullptr, nullptr)) {}
  ~brotli_encoder() override {
    if (m_s != nullptr)
      BrotliEncoderDestroyInstance(m_s);
  }
  brotli_encoder(const brotli_encoder&) = delete;
  brotli_encoder& operator=(const brotli_encoder&) = delete;

  result<void> init(const compression_options& opts, std::size_t size_hint) {
    if (m_s == nullptr)
      return compression_error(compression_errc::library_failure, encode_op);
    if (opts.brotli_quality < BROTLI_MIN_QUALITY || opts.brotli_quality > BROTLI_MAX_QUALITY ||
        opts.brotli_window_bits < BROTLI_MIN_WINDOW_BITS || opts.brotli_window_bits > BROTLI_MAX_WINDOW_BITS)
      return compression_error(compression_errc::invalid_options, encode_op);
    bool ok = BrotliEncoderSetParameter(m_s, BROTLI_PARAM_QUALITY, static_cast<uint32_t>(opts.brotli_quality)) &&
              BrotliEncoderSetParameter(m_s, BROTLI_PARAM_LGWIN, static_cast<uint32_t>(opts.brotli_window_bits));
    // The hint lets the encoder size its buffers to the body instead of the window.
    if (ok && size_hint != 0)
      ok = BrotliEncoderSetParameter(m_s, BROTLI_PARAM_SIZE_HINT,
                                     static_cast<uint32_t>(std::min<std::size_t>(size_hint, 1u << 30)));
    if (!ok)
      return compression_error(compression_errc::invalid_options, encode_op);
    return {};
  }

  result<void> run(std::string_view in, std::string& out, flush_mode mode) override {
    BrotliEncoderOperation op = mode == flush_mode::finish ? BROTLI_OPERATION_FINISH
                                : mode == flush_mode::sync ? BROTLI_OPERATION_FLUSH
                                                           : BROTLI_OPERATION_PROCESS;
    std::size_t avail_in = in.size();
    const auto* next_in = reinterpret_cast<const uint8_t*>(in.data());
    for (;;) {
      std::size_t old = grow_for_output(out);
      std::size_t room = out.size() - old;
      std::size_t avail_out = room;
      auto* next_out = reinterpret_cast<uint8_t*>(out.data() + old);
      bool ok = BrotliEncoderCompressStream(m_s, op, &avail_in, &next_in, &avail_out, &next_out, nullptr);
      out.resize(old + room - avail_out);
      if (!ok)
        return compression_error(compression_errc::library_failure, encode_op);
      bool more = BrotliEncoderHasMoreOutput(m_s);
      if (op == BROTLI_OPERATION_FINISH ? BrotliEncoderIsFinished(m_s) : (avail_in == 0 && !more))
        return {};
    }
  }

 private:
  BrotliEncoderState* m_s;
};

class brotli_decoder final : public codec_state {
 public:
  explicit brotli_decoder(std::size_t max_output) noexcept
      : m_s(BrotliDecoderCreateInstance(nullptr, nullptr, nullptr)), m_max(max_output) {}
  ~brotli_decoder() override {
    if (m_s != nullptr)
      BrotliDecoderDestroyInstance(m_s);
  }
  brotli_decoder(const brotli_decoder&) = delete;
  brotli_decoder& operator=(const brotli_decoder&) = delete;

  bool valid() const noexcept { return m_s != nullptr; }

  result<void> run(std::string_view in, std::string& out, flush_mode) override {
    if (in.empty())
      return {};
    m_started = true;
    if (m_ended)
      return compression_error(compression_errc::trailing_data, decode_op);
    std::size_t avail_in = in.size();
    const auto* next_in = reinterpret_cast<const uint8_t*>(in.data());
    for (;;) {
      std::size_t old = grow_for_output(out);
      // Room for one byte past the limit, so that exceeding it is seen before more is made.
      std::size_t allowed = m_max - m_total;
      std::size_t room = std::min(out.size() - old, allowed == SIZE_MAX ? allowed : allowed + 1);
      std::size_t avail_out = room;
      auto* next_out = reinterpret_cast<uint8_t*>(out.data() + old);
      BrotliDecoderResult rc = BrotliDecoderDecompressStream(m_s, &avail_in, &next_in, &avail_out, &next_out, nullptr);
      std::size_t made = room - avail_out;
      out.resize(old + made);
      m_total += made;
      if (m_total > m_max)
        return compression_error(compression_errc::output_limit, decode_op);
      switch (rc) {
        case BROTLI_DECODER_RESULT_ERROR:
          return compression_error(compression_errc::corrupt_input, decode_op);
        case BROTLI_DECODER_RESULT_SUCCESS:
          m_ended = true;
          if (avail_in != 0)
            return compression_error(compression_errc::trailing_data, decode_op);
          return {};
        case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
          return {};  // all of `in` was consumed
        case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
          break;
      }
    }
  }

  bool done() const noexcept override { return m_ended; }
  std::size_t total_out() const noexcept override { return m_total; }
  bool started() const noexcept override { return m_started; }

 private:
  BrotliDecoderState* m_s;
  std::size_t m_max;
  std::size_t m_total = 0;
  bool m_ended = false;
  bool m_started = false;
};

}  // namespace

result<codec_state*> make_brotli_encoder(const compression_options& opts, std::size_t size_hint) {
  auto* e = new (std::nothrow) brotli_encoder();
  if (e == nullptr)
    return compression_error(compression_errc::library_failure, encode_op);
  auto r = e->init(opts, size_hint);
  if (!r) {
    delete e;
    return r.err();
  }
  return static_cast<codec_state*>(e);
}

result<codec_state*> make_brotli_decoder(std::size_t max_output) {
  auto* d = new (std::nothrow) brotli_decoder(max_output);
  if (d == nullptr || !d->valid()) {
    delete d;
    return compression_error(compression_errc::library_failure, decode_op);
  }
  return static_cast<codec_state*>(d);
}

}  // namespace saturn::http::detail
