// The v3 protocol's framing on a connection's buffers: writing a message (type byte,
// big-endian length including itself, body), taking whole received messages out of rbuf
// without suspending, and parsing an ErrorResponse.
#include "pg/state.hpp"

#include <cstring>
#include <string>

namespace saturn::pg::detail {

error server_error(const message& m) {
  error e;
  e.kind = errc::server;
  const char* p = m.body;
  const char* end = m.body + m.size;
  while (p < end && *p != 0) {
    const char code = *p++;
    const std::size_t len = strnlen(p, static_cast<std::size_t>(end - p));
    std::string_view v(p, len);
    p += len + 1;
    if (code == 'C')
      e.sqlstate = v;
    else if (code == 'M')
      e.message = v;
    else if (code == 'D')
      e.detail = v;
    else if (code == 'H')
      e.hint = v;
  }
  if (e.sqlstate == "57014")
    e.kind = errc::cancelled;
  else if (e.sqlstate == "28P01" || e.sqlstate == "28000")
    e.kind = errc::auth;
  return e;
}

std::size_t connection_state::begin(char type) {
  if (type != 0)
    wbuf.push_back(type);
  const std::size_t at = wbuf.size();
  wbuf.append(4, '\0');
  return at;
}
void connection_state::end(std::size_t at) {
  const auto len = static_cast<std::uint32_t>(wbuf.size() - at);
  wbuf[at] = char(len >> 24);
  wbuf[at + 1] = char(len >> 16);
  wbuf[at + 2] = char(len >> 8);
  wbuf[at + 3] = char(len);
}
void connection_state::put16(std::int16_t v) {
  wbuf.push_back(char(std::uint16_t(v) >> 8));
  wbuf.push_back(char(v));
}
void connection_state::put32(std::int32_t v) {
  const auto u = static_cast<std::uint32_t>(v);
  const char b[4] = {char(u >> 24), char(u >> 16), char(u >> 8), char(u)};
  wbuf.append(b, 4);
}
void connection_state::put_cstr(std::string_view s) {
  wbuf.append(s);
  wbuf.push_back('\0');
}

bool connection_state::take_buffered(message& out) {
  for (;;) {
    const std::size_t avail = rend - rpos;
    if (avail < 5)
      return false;
    const std::int32_t len = get32(rbuf.data() + rpos + 1);
    if (len < 4 || avail < static_cast<std::size_t>(len) + 1)
      return false;  // a bad length is next()'s to report
    message m{rbuf[rpos], rbuf.data() + rpos + 5, static_cast<std::size_t>(len) - 4};
    rpos += static_cast<std::size_t>(len) + 1;
    if (m.type == 'N')
      continue;
    if (m.type == 'S') {
      const std::size_t k = strnlen(m.body, m.size);
      const std::size_t vs = k + 1 < m.size ? strnlen(m.body + k + 1, m.size - k - 1) : 0;
      server_params[std::string(m.body, k)] = std::string(k + 1 < m.size ? m.body + k + 1 : "", vs);
      continue;
    }
    if (m.type == 'A' && m.size >= 4) {
      notification n;
      n.backend_pid = get32(m.body);
      const char* p = m.body + 4;
      const std::size_t cl = strnlen(p, m.size - 4);
      n.channel.assign(p, cl);
      if (4 + cl + 1 < m.size)
        n.payload.assign(p + cl + 1, strnlen(p + cl + 1, m.size - 4 - cl - 1));
      notifications.push_back(std::move(n));
      // callers skip it; next_notification() looks at the queue
    }
    out = m;
    return true;
  }
}

}  // namespace saturn::pg::detail
