// pg::pool: a FIFO semaphore of max_size permits; a permit is one open (or openable)
// connection. Idle connections wait in a vector under a mutex.
#include <saturn/pg/pool.hpp>

#include <charconv>
#include <cstdlib>
#include <cstring>

namespace saturn::pg {
namespace {
std::size_t size_from_env(std::size_t asked) {
  if (asked > 0)
    return asked;
  if (const char* v = std::getenv("DATABASE_MAX_CONN"); v != nullptr) {
    std::size_t n = 0;
    auto [p, ec] = std::from_chars(v, v + std::strlen(v), n);
    if (ec == std::errc{} && n > 0)
      return n;
  }
  return 10;
}
}  // namespace

pool::pool(config cfg, pool_options opts)
    : m_cfg(std::move(cfg)), m_max(size_from_env(opts.max_size)), m_permits(m_max) {}

pool::~pool() = default;

pooled::~pooled() {
  if (m_pool != nullptr)
    m_pool->give_back(std::move(m_conn));
}

void pool::give_back(connection c) noexcept {
  {
    std::lock_guard lk(m_lock);
    if (c.is_broken())
      --m_open;
    else
      m_idle.push_back(std::move(c));
  }
  m_permits.release();
}

std::size_t pool::open_count() const noexcept {
  std::lock_guard lk(m_lock);
  return m_open;
}
std::size_t pool::idle_count() const noexcept {
  std::lock_guard lk(m_lock);
  return m_idle.size();
}

task<result<pooled>> pool::acquire() {
  auto w = co_await m_permits.acquire();
  if (!w.has_value()) {
    error e;
    e.kind = errc::cancelled;
    e.message = "cancelled while waiting for a pooled connection";
    co_return e;
  }
  // The permit is ours: reuse an idle connection (dropping stale ones) or open one.
  for (;;) {
    std::optional<connection> c;
    {
      std::lock_guard lk(m_lock);
      if (!m_idle.empty()) {
        c.emplace(std::move(m_idle.back()));
        m_idle.pop_back();
      } else {
        ++m_open;
      }
    }
    if (!c) {
      auto fresh = co_await connection::connect(m_cfg);
      if (!fresh) {
        {
          std::lock_guard lk(m_lock);
          --m_open;
        }
        m_permits.release();
        co_return fresh.err();
      }
      co_return pooled(this, std::move(*fresh));
    }
    if (c->is_stale()) {
      std::lock_guard lk(m_lock);
      --m_open;
      continue;  // the socket closes with `c`
    }
    if (c->needs_reset()) {
      auto r = co_await c->reset();
      if (!r || c->is_broken()) {
        std::lock_guard lk(m_lock);
        --m_open;
        continue;
      }
    }
    co_return pooled(this, std::move(*c));
  }
}

task<result<rows>> pool::query_params(std::string_view sql, params ps) {
  auto c = co_await acquire();
  if (!c)
    co_return c.err();
  co_return co_await (*c)->query_params(sql, std::move(ps));
}

}  // namespace saturn::pg
