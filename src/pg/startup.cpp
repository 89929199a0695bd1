// Startup and authentication: StartupMessage, then the server's Authentication
// requests (trust, cleartext, md5, SCRAM-SHA-256) until ReadyForQuery.
#include "pg/auth.hpp"
#include "pg/state.hpp"
#include "pg/text.hpp"

namespace saturn::pg::detail {
task<result<void>> startup(connection_state* s) {
  const config& c = s->cfg;
  const std::size_t at = s->begin(0);
  s->put32(196608);  // protocol 3.0
  s->put_cstr("user");
  s->put_cstr(c.user);
  if (!c.dbname.empty()) {
    s->put_cstr("database");
    s->put_cstr(c.dbname);
  }
  if (!c.application_name.empty()) {
    s->put_cstr("application_name");
    s->put_cstr(c.application_name);
  }
  s->put_cstr("client_encoding");
  s->put_cstr("UTF8");
  s->wbuf.push_back('\0');
  s->end(at);
  if (auto f = co_await s->flush(); !f)
    co_return f.err();
  scram sc;
  for (;;) {
    auto m = co_await s->next(false);
    if (!m)
      co_return m.err();
    if (m->type == 'E') {
      error e = server_error(*m);
      s->broken = true;
      co_return e;
    }
    if (m->type == 'K' && m->size >= 8) {
      s->pid = get32(m->body);
      s->secret = get32(m->body + 4);
      continue;
    }
    if (m->type == 'Z') {
      s->tx_status = m->size > 0 ? m->body[0] : 'I';
      co_return result<void>{};
    }
    if (m->type != 'R' || m->size < 4)
      co_return s->fail(errc::protocol, cat({"unexpected message '", std::string_view(&m->type, 1), "' during startup"}));
    const std::int32_t code = get32(m->body);
    if (code == 0)
      continue;  // AuthenticationOk
    if (code == 3) {  // cleartext password
      const std::size_t a = s->begin('p');
      s->put_cstr(c.password);
      s->end(a);
    } else if (code == 5 && m->size >= 8) {  // md5
      const std::size_t a = s->begin('p');
      s->put_cstr(md5_password(c.user, c.password, std::string_view(m->body + 4, 4)));
      s->end(a);
    } else if (code == 10) {  // SASL: mechanisms list
      if (std::string_view(m->body + 4, m->size - 4).find("SCRAM-SHA-256") == std::string_view::npos)
        co_return s->fail(errc::auth, "the server offers no SASL mechanism this client supports");
      const std::string first = sc.client_first();
      const std::size_t a = s->begin('p');
      s->put_cstr("SCRAM-SHA-256");
      s->put32(static_cast<std::int32_t>(first.size()));
      s->wbuf.append(first);
      s->end(a);
    } else if (code == 11) {  // SASL continue: server-first
      std::string why;
      const std::string fin = sc.client_final(std::string_view(m->body + 4, m->size - 4), c.password, why);
      if (fin.empty())
        co_return s->fail(errc::auth, why);
      const std::size_t a = s->begin('p');
      s->wbuf.append(fin);
      s->end(a);
    } else if (code == 12) {  // SASL final
      if (!sc.verify_server(std::string_view(m->body + 4, m->size - 4)))
        co_return s->fail(errc::auth, "the server's SCRAM signature does not match (not the real server?)");
      continue;
    } else {
      co_return s->fail(errc::auth, cat({"the server asks for an authentication method this client does not support (", std::to_string(code), ")"}));
    }
    if (auto f = co_await s->flush(); !f)
      co_return f.err();
  }
}

}  // namespace saturn::pg::detail
