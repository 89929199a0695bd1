// The HTTP/2 (h2c) server scenario (scenarios.hpp): nghttp2 clients speaking prior
// knowledge h2c to saturn's server over loopback, under the simulator.
#include <nghttp2/nghttp2.h>

#include <saturn/http.hpp>
#include <saturn/net.hpp>
#include <saturn/task.hpp>

#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/http_harness.hpp"
#include "sim/scenarios.hpp"

namespace saturn::sim_scenarios {
namespace {

using namespace std::chrono_literals;

[[noreturn]] void h2_fail(const std::string& what) { throw std::runtime_error("h2 scenario: " + what); }

struct h2_stream {
  std::string expect;  // the body the answer must carry
  std::string upload;  // a POST's body
  std::size_t sent = 0;
  std::string status;
  std::string body;
  bool reset_by_us = false;
  bool closed = false;
  std::uint32_t error = 0;
};

/// One client connection: an nghttp2 client session fed from and drained to a tcp_stream.
struct h2_client {
  nghttp2_session* session = nullptr;
  std::map<std::int32_t, h2_stream> streams;
  std::size_t open = 0;

  h2_client(std::uint32_t window) {
    nghttp2_session_callbacks* cbs = nullptr;
    nghttp2_session_callbacks_new(&cbs);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
        cbs, [](nghttp2_session*, std::uint8_t, std::int32_t id, const std::uint8_t* d, std::size_t n, void* self) {
          auto& c = *static_cast<h2_client*>(self);
          if (auto it = c.streams.find(id); it != c.streams.end())
            it->second.body.append(reinterpret_cast<const char*>(d), n);
          return 0;
        });
    nghttp2_session_callbacks_set_on_header_callback(
        cbs, [](nghttp2_session*, const nghttp2_frame* f, const std::uint8_t* name, std::size_t namelen,
                const std::uint8_t* value, std::size_t valuelen, std::uint8_t, void* self) {
          auto& c = *static_cast<h2_client*>(self);
          if (std::string_view(reinterpret_cast<const char*>(name), namelen) == ":status")
            if (auto it = c.streams.find(f->hd.stream_id); it != c.streams.end())
              it->second.status.assign(reinterpret_cast<const char*>(value), valuelen);
          return 0;
        });
    nghttp2_session_callbacks_set_on_stream_close_callback(
        cbs, [](nghttp2_session*, std::int32_t id, std::uint32_t error, void* self) {
          auto& c = *static_cast<h2_client*>(self);
          if (auto it = c.streams.find(id); it != c.streams.end() && !it->second.closed) {
            it->second.closed = true;
            it->second.error = error;
            --c.open;
          }
          return 0;
        });
    if (std::getenv("SATURN_H2_TRACE") != nullptr) {
      nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, [](nghttp2_session*, const nghttp2_frame* f, void* self) {
        std::fprintf(stderr, "%9lld %04x recv type %d stream %d len %zu flags %x",
                     (long long)(clock::now().time_since_epoch().count() / 1000), unsigned(reinterpret_cast<std::uintptr_t>(self) & 0xffff), f->hd.type, f->hd.stream_id,
                     f->hd.length, f->hd.flags);
        if (f->hd.type == NGHTTP2_GOAWAY)
          std::fprintf(stderr, " error %u '%.*s'", f->goaway.error_code, int(f->goaway.opaque_data_len),
                       reinterpret_cast<const char*>(f->goaway.opaque_data));
        if (f->hd.type == NGHTTP2_SETTINGS)
          for (std::size_t i = 0; i < f->settings.niv; ++i)
            std::fprintf(stderr, " %d=%u", f->settings.iv[i].settings_id, f->settings.iv[i].value);
        std::fprintf(stderr, "\n");
        return 0;
      });
      nghttp2_session_callbacks_set_on_frame_send_callback(cbs, [](nghttp2_session*, const nghttp2_frame* f, void* self) {
        std::fprintf(stderr, "%9lld %04x send type %d stream %d len %zu flags %x%s\n",
                     (long long)(clock::now().time_since_epoch().count() / 1000), unsigned(reinterpret_cast<std::uintptr_t>(self) & 0xffff), f->hd.type, f->hd.stream_id,
                     f->hd.length, f->hd.flags,
                     f->hd.type == NGHTTP2_WINDOW_UPDATE ? (" incr " + std::to_string(f->window_update.window_size_increment)).c_str() : "");
        return 0;
      });
    }
    nghttp2_session_client_new(&session, cbs, this);
    nghttp2_session_callbacks_del(cbs);
    const nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, window},
                                         {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100}};
    nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, iv, 2);
  }
  ~h2_client() { nghttp2_session_del(session); }
  h2_client(const h2_client&) = delete;
  h2_client& operator=(const h2_client&) = delete;

  static nghttp2_nv header(const char* name, const std::string& value) {
    return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name)),
            reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), std::strlen(name), value.size(),
            NGHTTP2_NV_FLAG_NONE};
  }

  /// GET /data?n=N, or POST /upload with an N-byte body.
  void request(bool post, std::size_t n) {
    const std::string method = post ? "POST" : "GET";
    const std::string path = post ? "/upload" : "/data?n=" + std::to_string(n);
    const std::string scheme = "http", authority = "127.0.0.1";
    const nghttp2_nv nva[] = {header(":method", method), header(":scheme", scheme), header(":authority", authority),
                              header(":path", path)};
    h2_stream s;
    s.expect = post ? std::to_string(n) : body_of(n);
    if (post)
      s.upload = body_of(n);
    nghttp2_data_provider prd{};
    prd.read_callback = [](nghttp2_session* sess, std::int32_t id, std::uint8_t* buf, std::size_t len,
                           std::uint32_t* flags, nghttp2_data_source*, void* self) -> ssize_t {
      auto& c = *static_cast<h2_client*>(self);
      (void)sess;
      h2_stream& st = c.streams.at(id);
      const std::size_t k = std::min(len, st.upload.size() - st.sent);
      std::memcpy(buf, st.upload.data() + st.sent, k);
      st.sent += k;
      if (st.sent == st.upload.size())
        *flags |= NGHTTP2_DATA_FLAG_EOF;
      return static_cast<ssize_t>(k);
    };
    const std::int32_t id = nghttp2_submit_request(session, nullptr, nva, 4, post ? &prd : nullptr, nullptr);
    if (id < 0)
      h2_fail(std::string("submit_request: ") + nghttp2_strerror(id));
    streams.emplace(id, std::move(s));
    ++open;
  }

  /// Everything nghttp2 has to send, as one send on the stream. False when the connection failed.
  task<bool> flush(net::tcp_stream& c) {
    std::string out;
    for (;;) {
      const std::uint8_t* data = nullptr;
      const ssize_t n = nghttp2_session_mem_send(session, &data);
      if (n < 0)
        h2_fail(std::string("mem_send: ") + nghttp2_strerror(static_cast<int>(n)));
      if (n == 0)
        break;
      out.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
    }
    if (out.empty())
      co_return true;
    auto r = co_await c.send(std::as_bytes(std::span(out)));
    co_return r.has_value();
  }
};

task<void> h2_client_run(sim::world& w, std::uint16_t port) {
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(port));
  if (!c)
    h2_fail("connect: " + c.err().message());
  // A small window makes the server wait for WINDOW_UPDATEs on the larger answers.
  h2_client cl(static_cast<std::uint32_t>(w.random_below(2) == 0 ? 65535 : 1024 + w.random_below(16384)));
  const int n = 1 + static_cast<int>(w.random_below(8));
  for (int i = 0; i < n; ++i)
    cl.request(w.random_below(3) == 0, w.random_below(3) == 0 ? 20000 + w.random_below(40000) : w.random_below(2000));
  std::vector<std::int32_t> ids;
  for (auto& [id, s] : cl.streams)
    ids.push_back(id);
  bool reset_done = w.random_below(3) != 0;  // a third of the clients cancel a stream mid-way
  const bool abrupt = w.random_below(8) == 0;  // and some drop the whole connection
  std::byte buf[16384];
  int reads = 0;
  while (cl.open > 0) {
    if (!co_await cl.flush(*c))
      h2_fail("send failed");
    if (!reset_done && reads == 1) {
      const std::int32_t id = ids[w.random_below(ids.size())];
      h2_stream& s = cl.streams.at(id);
      if (!s.closed) {
        s.reset_by_us = true;
        nghttp2_submit_rst_stream(cl.session, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
      }
      reset_done = true;
      continue;
    }
    if (abrupt && reads == 2) {
      // RST (SO_LINGER 0): the server must drop the connection and every stream on it.
      ::linger lg{1, 0};
      ::setsockopt(c->fd(), SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
      co_await c->close();
      co_return;
    }
    if (w.random_below(4) == 0)
      co_await sleep_for(std::chrono::microseconds(w.random_below(50)));  // a slow reader
    auto r = co_await c->recv(buf);
    if (!r || *r == 0) {
      std::string what;
      for (auto& [id, s] : cl.streams)
        what += " [stream " + std::to_string(id) + (s.closed ? " closed" : " open") + (s.reset_by_us ? ", reset by us" : "") +
                ", status " + (s.status.empty() ? "-" : s.status) + ", " + std::to_string(s.body.size()) + " of " +
                std::to_string(s.expect.size()) + " bytes" +
                (s.upload.empty() ? "" : ", uploaded " + std::to_string(s.sent) + " of " + std::to_string(s.upload.size())) + "]";
      h2_fail("the server closed the connection (" + (r ? std::string("end of stream") : r.err().message()) + ") with " +
           std::to_string(cl.open) + " stream(s) open:" + what);
    }
    ++reads;
    const ssize_t k = nghttp2_session_mem_recv(cl.session, reinterpret_cast<const std::uint8_t*>(buf), *r);
    if (k < 0)
      h2_fail(std::string("the server sent what nghttp2 rejects: ") + nghttp2_strerror(static_cast<int>(k)));
  }
  for (auto& [id, s] : cl.streams) {
    if (s.reset_by_us)
      continue;  // answered or not, both are right
    if (s.error != NGHTTP2_NO_ERROR)
      h2_fail("stream " + std::to_string(id) + " closed with error " + std::to_string(s.error));
    if (s.status != "200")
      h2_fail("stream " + std::to_string(id) + " answered " + s.status);
    if (s.body != s.expect)
      h2_fail("stream " + std::to_string(id) + ": a body of " + std::to_string(s.body.size()) + " bytes, " +
           std::to_string(s.expect.size()) + " expected");
  }
  nghttp2_submit_goaway(cl.session, NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(cl.session),
                        NGHTTP2_NO_ERROR, nullptr, 0);
  (void)co_await cl.flush(*c);
  co_await c->close();
}

}  // namespace

task<void> h2_server_scenario(sim::world& w) {
  return serve_scenario(
      w,
      [&w](std::uint16_t port) {
        std::vector<join_handle<void>> clients;
        const int n = 1 + static_cast<int>(w.random_below(4));
        for (int i = 0; i < n; ++i)
          clients.push_back(spawn(h2_client_run(w, port)));
        return clients;
      },
      "h2 scenario");
}

}  // namespace saturn::sim_scenarios
