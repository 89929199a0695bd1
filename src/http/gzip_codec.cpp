// gzip (RFC 1952) through zlib: deflate with windowBits 15 + 16 (the gzip wrapper) and
// inflate with the same. zlib counts in uInt, so inputs over 4 GiB are fed in slices.
#include "http/codec_state.hpp"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <new>

namespace saturn::http::detail {
namespace {

constexpr int gzip_wrapper = 16;  // added to windowBits: gzip header and trailer, not zlib's
constexpr std::size_t max_slice = UINT_MAX;

const char* const encode_op = "gzip encode";
const char* const decode_op = "gzip decode";

Bytef* in_ptr(std::string_view in) noexcept {
  // zlib's next_in is not const-qualified in every build (ZLIB_CONST aside); it never writes.
  return reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
}

/// The smallest windowBits (9..15) whose window covers `n` bytes: a one-shot body smaller
/// than 32 KiB compresses the same with a smaller window, and zlib's state shrinks with it.
int window_bits_for(std::size_t n) noexcept {
  int bits = 9;
  while (bits < 15 && (std::size_t{1} << bits) < n)
    ++bits;
  return bits;
}

class gzip_encoder final : public codec_state {
 public:
  gzip_encoder() noexcept { m_z = z_stream{}; }
  ~gzip_encoder() override {
    if (m_live)
      deflateEnd(&m_z);
  }
  gzip_encoder(const gzip_encoder&) = delete;
  gzip_encoder& operator=(const gzip_encoder&) = delete;

  result<void> init(int level, std::size_t size_hint) {
    int bits = size_hint == 0 ? 15 : window_bits_for(size_hint);
    // memLevel 8 is zlib's default (a 64 KiB hash table); for small one-shot bodies the
    // table shrinks with the window, which saves clearing memory the body never uses.
    int mem_level = std::clamp(bits - 7, 1, 8);
    int rc = deflateInit2(&m_z, level, Z_DEFLATED, bits + gzip_wrapper, mem_level, Z_DEFAULT_STRATEGY);
    if (rc == Z_STREAM_ERROR)
      return compression_error(compression_errc::invalid_options, encode_op);
    if (rc != Z_OK)
      return compression_error(compression_errc::library_failure, encode_op);
    m_live = true;
    return {};
  }

  result<void> run(std::string_view in, std::string& out, flush_mode mode) override {
    do {
      std::size_t slice = std::min(in.size(), max_slice);
      bool last = slice == in.size();
      int flush = !last ? Z_NO_FLUSH : mode == flush_mode::finish ? Z_FINISH : mode == flush_mode::sync ? Z_SYNC_FLUSH : Z_NO_FLUSH;
      m_z.next_in = in_ptr(in);
      m_z.avail_in = static_cast<uInt>(slice);
      int rc;
      do {
        std::size_t old = grow_for_output(out);
        std::size_t room = std::min(out.size() - old, max_slice);
        m_z.next_out = reinterpret_cast<Bytef*>(out.data() + old);
        m_z.avail_out = static_cast<uInt>(room);
        rc = deflate(&m_z, flush);
        out.resize(old + room - m_z.avail_out);
        if (rc == Z_STREAM_ERROR)
          return compression_error(compression_errc::library_failure, encode_op);
        // Z_BUF_ERROR: no progress possible (nothing left to do for this flush): not an error.
      } while (flush == Z_FINISH ? rc != Z_STREAM_END : (m_z.avail_out == 0 || m_z.avail_in != 0));
      in.remove_prefix(slice);
    } while (!in.empty());
    return {};
  }

 private:
  z_stream m_z;
  bool m_live = false;
};

class gzip_decoder final : public codec_state {
 public:
  explicit gzip_decoder(std::size_t max_output) noexcept : m_max(max_output) { m_z = z_stream{}; }
  ~gzip_decoder() override {
    if (m_live)
      inflateEnd(&m_z);
  }
  gzip_decoder(const gzip_decoder&) = delete;
  gzip_decoder& operator=(const gzip_decoder&) = delete;

  result<void> init() {
    int rc = inflateInit2(&m_z, 15 + gzip_wrapper);
    if (rc != Z_OK)
      return compression_error(compression_errc::library_failure, decode_op);
    m_live = true;
    return {};
  }

  result<void> run(std::string_view in, std::string& out, flush_mode) override {
    if (!in.empty())
      m_started = true;
    while (!in.empty()) {
      if (m_ended) {
        // Another gzip member follows (RFC 1952 §2.2: a file is a series of members).
        inflateReset(&m_z);
        m_ended = false;
      }
      std::size_t slice = std::min(in.size(), max_slice);
      m_z.next_in = in_ptr(in);
      m_z.avail_in = static_cast<uInt>(slice);
      int rc;
      do {
        std::size_t old = grow_for_output(out);
        // Room for one byte past the limit, so that exceeding it is seen before more is made.
        std::size_t allowed = m_max - m_total;
        std::size_t room = std::min({out.size() - old, max_slice, allowed == SIZE_MAX ? allowed : allowed + 1});
        m_z.next_out = reinterpret_cast<Bytef*>(out.data() + old);
        m_z.avail_out = static_cast<uInt>(room);
        rc = inflate(&m_z, Z_NO_FLUSH);
        std::size_t made = room - m_z.avail_out;
        out.resize(old + made);
        m_total += made;
        if (m_total > m_max)
          return compression_error(compression_errc::output_limit, decode_op);
        if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_STREAM_ERROR)
          return compression_error(compression_errc::corrupt_input, decode_op);
        if (rc == Z_MEM_ERROR)
          return compression_error(compression_errc::library_failure, decode_op);
        if (rc == Z_STREAM_END) {
          m_ended = true;
          break;
        }
        // Z_OK or Z_BUF_ERROR: go on while input is left or the output filled up.
      } while (m_z.avail_in != 0 || m_z.avail_out == 0);
      in.remove_prefix(slice - m_z.avail_in);
    }
    return {};
  }

  bool done() const noexcept override { return m_ended; }
  std::size_t total_out() const noexcept override { return m_total; }
  bool started() const noexcept override { return m_started; }

 private:
  z_stream m_z;
  std::size_t m_max;
  std::size_t m_total = 0;
  bool m_live = false;
  bool m_ended = false;
  bool m_started = false;
};

}  // namespace

result<codec_state*> make_gzip_encoder(const compression_options& opts, std::size_t size_hint) {
  auto* e = new (std::nothrow) gzip_encoder();
  if (e == nullptr)
    return compression_error(compression_errc::library_failure, encode_op);
  auto r = e->init(opts.gzip_level, size_hint);
  if (!r) {
    delete e;
    return r.err();
  }
  return static_cast<codec_state*>(e);
}

result<codec_state*> make_gzip_decoder(std::size_t max_output) {
  auto* d = new (std::nothrow) gzip_decoder(max_output);
  if (d == nullptr)
    return compression_error(compression_errc::library_failure, decode_op);
  auto r = d->init();
  if (!r) {
    delete d;
    return r.err();
  }
  return static_cast<codec_state*>(d);
}

}  // namespace saturn::http::detail
