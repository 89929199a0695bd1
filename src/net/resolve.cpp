// net::resolve on c-ares, driven from the ring.
//
// Protocol. A numeric host is parsed here and never reaches c-ares. Otherwise the resolve
// makes a c-ares channel of its own (lookups "fb": the hosts file, then DNS), starts one
// ares_getaddrinfo on it and runs this loop in its own coroutine until the query's
// callback has run:
//   1. ares_getsock: the sockets c-ares wants to read or write; ares_timeout: how long
//      until its next retry or give-up;
//   2. when_any over one saturn::poll per socket (POLLIN / POLLOUT as asked) and one
//      sleep for the timeout: the first to end wins, the others are cancelled and awaited,
//      so no poll is left in flight between two turns (c-ares closes sockets inside
//      ares_process_fd; a poll still armed on a closed, reused fd would be a bug);
//   3. ares_process_fd for the socket that became ready (c-ares does its own non-blocking
//      read or write), or with no socket when the sleep won (c-ares handles the timeout:
//      the next try, the next server, or the end of the query).
// The c-ares callback only records the outcome in the frame (`lookup`); it runs inside
// ares_getaddrinfo or ares_process_fd, called by this coroutine itself, so nothing is
// resumed from inside c-ares and no wake-up is needed.
//
// Channel per call, not per thread (docs/decisions/dns.md has the measurements). Making
// and destroying a channel costs a few microseconds, small next to any DNS round trip. A
// per-thread channel would be shared by every resolve on that worker, but a saturn task
// may resume on another worker after any suspension (work stealing) and c-ares channels
// are not thread-safe, so its queries and its sockets' polls would have to be pinned to
// the owning worker and every call marshalled there. Per call, the channel belongs to one
// coroutine, which runs on one thread at a time. Cancellation is exact too: ares_cancel
// and ares_destroy end every query of a channel, which here is just this one. What is
// lost: resolves that overlap sharing one UDP socket or TCP connection, and c-ares's
// server-rotation state.
//
// Cancellation. A stop of the task's token cancels the when_any's children (their polls
// get an ASYNC_CANCEL, the sleep is disarmed); when_any returns once all of them have
// ended, and the resolve then destroys the channel (the callback runs with
// ARES_EDESTRUCTION, its sockets are closed) and returns operation_canceled.
#include <saturn/net/resolve.hpp>
#include <saturn/task/io.hpp>
#include <saturn/task/this_task.hpp>
#include <saturn/task/time.hpp>
#include <saturn/task/when_any.hpp>

#include <saturn/net/stable_text.hpp>

#include <ares.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>

#include <algorithm>
#include <cstring>
#include <mutex>

namespace saturn::net {

namespace {

error invalid(const char* op) noexcept { return error{std::make_error_code(std::errc::invalid_argument), op}; }

/// A host that is an IPv4 or IPv6 literal ("[::1]" too), or nothing.
bool parse_numeric(std::string_view host, std::uint16_t port, address& out) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  char buf[INET6_ADDRSTRLEN + 1];
  if (host.empty() || host.size() >= sizeof buf)
    return false;
  std::memcpy(buf, host.data(), host.size());
  buf[host.size()] = '\0';
  ::sockaddr_in in{};
  if (::inet_pton(AF_INET, buf, &in.sin_addr) == 1) {
    in.sin_family = AF_INET;
    in.sin_port = htons(port);
    auto a = address::from_sockaddr(reinterpret_cast<const ::sockaddr*>(&in), sizeof in);
    out = *a;
    return true;
  }
  ::sockaddr_in6 in6{};
  if (::inet_pton(AF_INET6, buf, &in6.sin6_addr) == 1) {
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons(port);
    auto a = address::from_sockaddr(reinterpret_cast<const ::sockaddr*>(&in6), sizeof in6);
    out = *a;
    return true;
  }
  return false;
}

/// What the query's callback recorded.
struct lookup {
  bool done = false;
  int status = ARES_SUCCESS;
  std::vector<address> addrs;
};

void on_addrinfo(void* arg, int status, int /*timeouts*/, ares_addrinfo* ai) noexcept {
  auto* l = static_cast<lookup*>(arg);
  l->done = true;
  l->status = status;
  if (ai == nullptr)
    return;
  try {
    for (const ares_addrinfo_node* n = ai->nodes; n != nullptr; n = n->ai_next) {
      auto a = address::from_sockaddr(n->ai_addr, static_cast<::socklen_t>(n->ai_addrlen));
      // The hosts file and DNS can both list an address: keep the first of each.
      if (a && std::find(l->addrs.begin(), l->addrs.end(), *a) == l->addrs.end())
        l->addrs.push_back(*a);
    }
  } catch (...) {
    l->status = ARES_ENOMEM;
  }
  ares_freeaddrinfo(ai);
}

/// Owns a channel; destroying it ends its queries (callbacks with ARES_EDESTRUCTION).
struct channel {
  ares_channel ch = nullptr;
  channel() = default;
  channel(const channel&) = delete;
  channel& operator=(const channel&) = delete;
  ~channel() {
    if (ch != nullptr)
      ares_destroy(ch);
  }
};

/// The servers the channel asks, "1.2.3.4:53, [::1]:5353", for error messages.
std::string server_list(ares_channel ch) {
  std::string out;
  ares_addr_port_node* servers = nullptr;
  if (ares_get_servers_ports(ch, &servers) != ARES_SUCCESS)
    return out;
  for (ares_addr_port_node* s = servers; s != nullptr; s = s->next) {
    char buf[INET6_ADDRSTRLEN];
    if (::inet_ntop(s->family, &s->addr, buf, sizeof buf) == nullptr)
      continue;
    if (!out.empty())
      out += ", ";
    const int port = s->udp_port != 0 ? s->udp_port : 53;
    // Appends one piece at a time: g++ 12 warns (-Wrestrict) on "[" + std::string(...).
    if (s->family == AF_INET6)
      out.append(1, '[').append(buf).append(1, ']');
    else
      out.append(buf);
    out.append(1, ':').append(std::to_string(port));
  }
  ares_free_data(servers);
  return out;
}

/// The error for a query that ended with `status`.
error failure(int status, std::string_view host, ares_channel ch, const resolve_options& opts) {
  if (status == ARES_EDESTRUCTION || status == ARES_ECANCELLED)
    return error{std::make_error_code(std::errc::operation_canceled), "resolve"};
  if (status == ARES_ENOMEM)
    return error{std::make_error_code(std::errc::not_enough_memory), "resolve"};
  std::string what = "resolve " + std::string(host);
  switch (status) {
    case ARES_ETIMEOUT:
      what += " (" + std::to_string(opts.tries) + (opts.tries == 1 ? " try" : " tries") + " against " +
              server_list(ch) + ")";
      break;
    case ARES_ECONNREFUSED:
    case ARES_ESERVFAIL:
    case ARES_EREFUSED: what += " (asked " + server_list(ch) + ")"; break;
    default: break;
  }
  return error{std::error_code(status, resolve_category()), stable_text(std::move(what), "resolve")};
}

/// What woke the driver: a socket's poll (fd >= 0) or the timeout (fd < 0).
struct wake {
  int fd = -1;
  unsigned asked = 0;
  unsigned ready = 0;
  error err{};
  bool failed = false;
};

task<wake> wait_socket(int fd, unsigned events) {
  auto p = saturn::poll(fd, events);
  auto r = co_await p;
  if (!r)
    co_return wake{fd, events, 0, r.err(), true};
  co_return wake{fd, events, *r, {}, false};
}

task<wake> wait_timeout(std::chrono::microseconds d) {
  auto s = saturn::sleep_for(d);
  auto r = co_await s;
  if (!r)
    co_return wake{-1, 0, 0, r.err(), true};
  co_return wake{};
}

void init_library() {
  static std::once_flag once;
  // ares_library_init is not thread-safe; on Linux it does nothing that can fail.
  std::call_once(once, [] { (void)ares_library_init(ARES_LIB_INIT_ALL); });
}

result<void> make_channel(channel& c, std::string_view host, const resolve_options& opts) {
  init_library();
  if (opts.tries < 1 || opts.timeout.count() < 1)
    return invalid("resolve: resolve_options::tries and ::timeout must be at least 1");
  ares_options o{};
  o.lookups = const_cast<char*>("fb");  // c-ares copies it
  o.timeout = static_cast<int>(std::min<std::chrono::milliseconds::rep>(opts.timeout.count(), 1 << 30));
  o.tries = opts.tries;
  const int st = ares_init_options(&c.ch, &o, ARES_OPT_LOOKUPS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES);
  if (st != ARES_SUCCESS) {
    c.ch = nullptr;
    return error{std::error_code(st, resolve_category()), "resolve: c-ares channel setup (ares_init_options)"};
  }
  if (!opts.servers.empty()) {
    std::string csv;
    for (const std::string& s : opts.servers) {
      if (!csv.empty())
        csv += ',';
      csv += s;
    }
    if (ares_set_servers_ports_csv(c.ch, csv.c_str()) != ARES_SUCCESS)
      return error{std::make_error_code(std::errc::invalid_argument),
                   stable_text("resolve " + std::string(host) + ": bad resolve_options::servers \"" + csv +
                                           "\" (want \"1.2.3.4\", \"1.2.3.4:53\" or \"[::1]:53\")",
                                       "resolve: bad resolve_options::servers")};
  }
  return {};
}

int family_of(ip_family f) noexcept {
  switch (f) {
    case ip_family::v4: return AF_INET;
    case ip_family::v6: return AF_INET6;
    case ip_family::any: break;
  }
  return AF_UNSPEC;
}

}  // namespace

task<result<std::vector<address>>> resolve(std::string_view host_view, std::uint16_t port, resolve_options opts) {
  // lifetime: the caller's string_view may not outlive the first suspension.
  const std::string host(host_view);
  if (host.empty() || host.find('\0') != std::string::npos)
    co_return invalid("resolve: empty host name (or one with a NUL byte)");

  if (address a; parse_numeric(host, port, a)) {
    const bool wrong = (opts.family == ip_family::v4 && !a.is_v4()) || (opts.family == ip_family::v6 && !a.is_v6());
    if (wrong)
      co_return error{make_error_code(resolve_errc::no_data),
                      stable_text("resolve " + host + " (a numeric address of the other family)", "resolve")};
    co_return std::vector<address>{a};
  }

  task_context& ctx = co_await this_task::context();
  // lifetime: `found` is declared before `chan`, so the channel is destroyed first and
  // its ARES_EDESTRUCTION callback (for a query cut short) still writes into a live frame.
  lookup found;
  channel chan;
  if (auto made = make_channel(chan, host, opts); !made)
    co_return made.err();

  ares_addrinfo_hints hints{};
  hints.ai_family = family_of(opts.family);
  // No service: the port is set below. The callback may run at once (a hosts-file hit).
  ares_getaddrinfo(chan.ch, host.c_str(), nullptr, &hints, &on_addrinfo, &found);

  while (!found.done) {
    if (ctx.token.stop_requested())
      co_return error{std::make_error_code(std::errc::operation_canceled), "resolve"};
    ares_socket_t socks[ARES_GETSOCK_MAXNUM];
    const int bits = ares_getsock(chan.ch, socks, ARES_GETSOCK_MAXNUM);
    std::vector<task<wake>> waits;
    for (int i = 0; i < ARES_GETSOCK_MAXNUM; ++i) {
      unsigned events = 0;
      if (ARES_GETSOCK_READABLE(bits, i))
        events |= POLLIN;
      if (ARES_GETSOCK_WRITABLE(bits, i))
        events |= POLLOUT;
      if (events != 0)
        waits.push_back(wait_socket(socks[i], events));
    }
    timeval tv{};
    if (ares_timeout(chan.ch, nullptr, &tv) != nullptr)
      waits.push_back(wait_timeout(std::chrono::seconds(tv.tv_sec) + std::chrono::microseconds(tv.tv_usec)));
    if (waits.empty())  // a query with neither a socket nor a timer would never end
      co_return error{std::make_error_code(std::errc::io_error),
                      stable_text("resolve " + host + ": c-ares has nothing to wait for", "resolve")};

    auto first = co_await saturn::when_any(std::move(waits));
    if (ctx.token.stop_requested())
      co_return error{std::make_error_code(std::errc::operation_canceled), "resolve"};
    const wake& w = first.value;
    if (w.failed)  // not a stop (checked above): the ring could not poll c-ares's socket
      co_return error{w.err.code,
                      stable_text("resolve " + host + ": " + w.err.operation + " of a DNS socket", "resolve")};
    if (w.fd < 0) {
      ares_process_fd(chan.ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);  // the timeout's turn
      continue;
    }
    // POLLERR / POLLHUP come whatever was asked: let c-ares read (or write) to see them.
    const unsigned trouble = POLLERR | POLLHUP;
    const bool rd = (w.asked & POLLIN) != 0 && (w.ready & (POLLIN | trouble)) != 0;
    const bool wr = (w.asked & POLLOUT) != 0 && (w.ready & (POLLOUT | trouble)) != 0;
    ares_process_fd(chan.ch, rd ? w.fd : ARES_SOCKET_BAD, wr ? w.fd : ARES_SOCKET_BAD);
  }

  if (found.status != ARES_SUCCESS)
    co_return failure(found.status, host, chan.ch, opts);
  if (found.addrs.empty())
    co_return failure(ARES_ENODATA, host, chan.ch, opts);
  for (address& a : found.addrs)
    a = a.with_port(port);
  co_return std::move(found.addrs);
}

}  // namespace saturn::net
