// The BIO between OpenSSL and the ring: reads hand OpenSSL the ciphertext the stream
// received, writes append OpenSSL's records to the stream's output buffer. It never
// touches the socket; with nothing to read it asks OpenSSL to retry (WANT_READ), and
// tls::stream receives more through the ring. Writes always succeed (the stream sends
// the buffer afterwards), so SSL_write never needs a retry.
#include "tls/context_impl.hpp"
#include "tls/stream_state.hpp"

#include <openssl/bio.h>

#include <algorithm>
#include <cstring>

namespace saturn::tls::detail {

namespace {

io_buffers* buffers(BIO* b) { return static_cast<io_buffers*>(BIO_get_data(b)); }

int bio_read(BIO* b, char* data, std::size_t len, std::size_t* readbytes) {
  io_buffers* io = buffers(b);
  BIO_clear_retry_flags(b);
  const std::size_t avail = io->in_len - io->in_pos;
  if (avail == 0) {
    *readbytes = 0;
    if (!io->eof)
      BIO_set_retry_read(b);
    return 0;  // without the retry flag: end of stream
  }
  const std::size_t n = std::min(avail, len);
  std::memcpy(data, io->in.get() + io->in_pos, n);
  io->in_pos += n;
  if (io->in_pos == io->in_len)
    io->in_pos = io->in_len = 0;
  *readbytes = n;
  return 1;
}

int bio_write(BIO* b, const char* data, std::size_t len, std::size_t* written) {
  io_buffers* io = buffers(b);
  BIO_clear_retry_flags(b);
  io->out.append(data, len);
  *written = len;
  return 1;
}

long bio_ctrl(BIO* b, int cmd, long, void*) {
  io_buffers* io = buffers(b);
  switch (cmd) {
    case BIO_CTRL_FLUSH:
      return 1;  // the stream sends the output buffer itself
    case BIO_CTRL_EOF:
      return io->eof && io->in_pos == io->in_len ? 1 : 0;
    case BIO_CTRL_PENDING:
      return static_cast<long>(io->in_len - io->in_pos);
    case BIO_CTRL_WPENDING:
      return static_cast<long>(io->out_pending());
    default:
      return 0;  // no kTLS, no duplication, no push / pop
  }
}

int bio_create(BIO* b) {
  BIO_set_init(b, 1);
  return 1;
}

int bio_destroy(BIO* b) {
  BIO_set_data(b, nullptr);  // the buffers belong to the stream
  return 1;
}

BIO_METHOD* make_method() {
  BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "saturn ring");
  BIO_meth_set_read_ex(m, bio_read);
  BIO_meth_set_write_ex(m, bio_write);
  BIO_meth_set_ctrl(m, bio_ctrl);
  BIO_meth_set_create(m, bio_create);
  BIO_meth_set_destroy(m, bio_destroy);
  return m;
}

}  // namespace

const BIO_METHOD* ring_bio_method() {
  static BIO_METHOD* const m = make_method();  // lifetime: the process (OpenSSL's own are too)
  return m;
}

}  // namespace saturn::tls::detail
