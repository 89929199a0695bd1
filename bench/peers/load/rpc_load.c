// rpc-load: the rpc suite's open-loop unary gRPC load at a fixed rate, for latency at half
// load. A neutral client (plain epoll and nghttp2's client session, not saturn), so no
// server is measured with its own code on the other side.
//
//   rpc-load --port P --rps R [--conns 16] [--streams 100] [--warmup 1] [--duration 5]
//            [--tick-us 0] [--path /benchmark.BenchmarkService/GetSum]
//
// Why not h2load --rps: h2load's pacing timer never fires more often than every 10 ms
// (`rps_watcher.repeat = max(0.01, 1 / rps)`), so at 3,750 calls/s per connection it sends
// bursts of ~37 calls per connection every 10 ms, all 16 connections at about the same
// moment: ~600 calls at once. Its latencies then measure how long a server takes to drain
// such a burst (2-3 ms for every server, saturn, grpc-go and libgrpc++ alike), not the
// latency at an even half load. With -m 1 it hides the queue instead (a call waiting for
// its connection's one stream is not yet timed).
//
// Here call i is due at start + i / R (an even schedule), on connection i mod C. It is sent
// as soon as it is due and its connection has fewer than `streams` calls open; its latency
// runs from when it was due (not from when it was sent) to the end of its answer, so time
// spent queued behind a slow server counts (no coordinated omission). The client wakes
// with 1 ns timer slack (epoll_pwait2).
//
// --tick-us T (default 0: a wake-up per due call): the client sleeps until the next multiple
// of T after start at which a call is due, and sends every call due by then. A timed sleep
// and wake-up costs this VM 5-10 us of CPU (a hypervisor exit each way), so at tens of
// thousands of calls a second a wake-up per call made the client the busiest thread on
// the machine and its own queueing the p99. Latency still runs from each call's due time,
// so the batching adds at most T to a call's latency: it can only make a server look
// slower.
//
// Every call is HttpArena's GetSum request (SumRequest{a=1, b=2}, 9 bytes framed) with
// content-type application/grpc and te: trailers; every answer must be :status 200, one
// 7-byte message SumReply{3} (00 00000002 0803) and grpc-status 0 in the trailers, else it
// counts as an error. Calls due in the `duration` window after `warmup` are measured; at
// the end the client waits up to 5 s for them. One line at the end:
//
//   RPC_RESULT {"calls":N,"errors":E,"unfinished":U,"duration_s":D,"target_rps":R,
//               "calls_per_sec":X,"p50_us":..,"p90_us":..,"p99_us":..,"p999_us":..,
//               "max_us":..,"max_send_lag_us":..,"conns":C,"streams":S,"tick_us":T}
//
// max_send_lag_us: the longest a due call waited before it was sent (its connection at
// `streams` open calls, or the client itself late): the part of the latency spent before
// the server saw the call. Exit status 0 when errors = unfinished = 0, 1 otherwise, 2 on
// bad usage.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const uint8_t k_request[9] = {0, 0, 0, 0, 4, 0x08, 0x01, 0x10, 0x02};
static const uint8_t k_reply[7] = {0, 0, 0, 0, 2, 0x08, 0x03};

#define MAX_STREAMS 1024

struct call {
  int64_t due_ns;
  int status_ok;  // :status 200 seen
  int grpc_ok;    // grpc-status 0 seen
  size_t bytes;
  uint8_t head[sizeof k_reply];
  size_t body_off;  // bytes of the request body handed to nghttp2
};

struct conn {
  int fd;
  nghttp2_session* session;
  struct call calls[MAX_STREAMS];
  int free_list[MAX_STREAMS];
  int nfree;
  int open;
  // Calls due but not sent yet (their due times), a ring.
  int64_t* queue;
  size_t qhead, qlen, qcap;
  uint8_t* out;  // bytes nghttp2 produced that the socket did not take yet
  size_t out_len, out_cap;
  int want_out;
  int dirty;  // nghttp2 may have bytes to send (a call submitted, input read)
};

static struct {
  int port, rps, conns, streams, tick_us;
  double warmup, duration;
  const char* path;
  char authority[64];
  int64_t window_start, window_end;
  int64_t* lat;
  size_t nlat, cap_lat;
  long errors, measured_due;
  int64_t max_lag;
} g = {.port = 0, .rps = 0, .conns = 16, .streams = 100, .warmup = 1, .duration = 5,
       .path = "/benchmark.BenchmarkService/GetSum"};

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char* what) {
  fprintf(stderr, "rpc-load: %s: %s\n", what, strerror(errno));
  exit(1);
}

static int measured(int64_t due) { return due >= g.window_start && due < g.window_end; }

static void record(int64_t due, int ok) {
  if (!measured(due))
    return;
  if (!ok) {
    ++g.errors;
    return;
  }
  if (g.nlat == g.cap_lat) {
    g.cap_lat = g.cap_lat ? g.cap_lat * 2 : 1 << 16;
    g.lat = realloc(g.lat, g.cap_lat * sizeof *g.lat);
    if (!g.lat)
      die("realloc");
  }
  g.lat[g.nlat++] = now_ns() - due;
}

static ssize_t body_read(nghttp2_session* s, int32_t id, uint8_t* buf, size_t len, uint32_t* flags,
                         nghttp2_data_source* src, void* user) {
  (void)s, (void)id, (void)user;
  struct call* c = src->ptr;
  size_t n = sizeof k_request - c->body_off;
  if (n > len)
    n = len;
  memcpy(buf, k_request + c->body_off, n);
  c->body_off += n;
  if (c->body_off == sizeof k_request)
    *flags |= NGHTTP2_DATA_FLAG_EOF;
  return (ssize_t)n;
}

static int on_header(nghttp2_session* s, const nghttp2_frame* f, const uint8_t* name, size_t nl,
                     const uint8_t* value, size_t vl, uint8_t flags, void* user) {
  (void)flags, (void)user;
  struct call* c = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
  if (!c)
    return 0;
  if (nl == 7 && memcmp(name, ":status", 7) == 0 && vl == 3 && memcmp(value, "200", 3) == 0)
    c->status_ok = 1;
  if (nl == 11 && memcmp(name, "grpc-status", 11) == 0 && vl == 1 && value[0] == '0')
    c->grpc_ok = 1;
  return 0;
}

static int on_data(nghttp2_session* s, uint8_t flags, int32_t id, const uint8_t* data, size_t len, void* user) {
  (void)flags, (void)user;
  struct call* c = nghttp2_session_get_stream_user_data(s, id);
  if (!c)
    return 0;
  for (size_t i = 0; i < len; ++i, ++c->bytes)
    if (c->bytes < sizeof c->head)
      c->head[c->bytes] = data[i];
  return 0;
}

static int on_close(nghttp2_session* s, int32_t id, uint32_t error_code, void* user) {
  struct conn* cn = user;
  struct call* c = nghttp2_session_get_stream_user_data(s, id);
  if (!c)
    return 0;
  int ok = error_code == 0 && c->status_ok && c->grpc_ok && c->bytes == sizeof k_reply &&
           memcmp(c->head, k_reply, sizeof k_reply) == 0;
  record(c->due_ns, ok);
  cn->free_list[cn->nfree++] = (int)(c - cn->calls);
  --cn->open;
  return 0;
}

static void queue_push(struct conn* c, int64_t due) {
  if (c->qlen == c->qcap) {
    size_t cap = c->qcap ? c->qcap * 2 : 1024;
    int64_t* q = malloc(cap * sizeof *q);
    if (!q)
      die("malloc");
    for (size_t i = 0; i < c->qlen; ++i)
      q[i] = c->queue[(c->qhead + i) % c->qcap];
    free(c->queue);
    c->queue = q, c->qhead = 0, c->qcap = cap;
  }
  c->queue[(c->qhead + c->qlen++) % c->qcap] = due;
}

// Submits the queued calls this connection has room for.
static void submit_due(struct conn* c, int64_t now) {
  while (c->qlen > 0 && c->open < g.streams) {
    int64_t due = c->queue[c->qhead];
    c->qhead = (c->qhead + 1) % c->qcap, --c->qlen;
    if (measured(due) && now - due > g.max_lag)
      g.max_lag = now - due;
    int slot = c->free_list[--c->nfree];
    struct call* k = &c->calls[slot];
    memset(k, 0, sizeof *k);
    k->due_ns = due;
    const nghttp2_nv hdrs[] = {
        {(uint8_t*)":method", (uint8_t*)"POST", 7, 4, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t*)":scheme", (uint8_t*)"http", 7, 4, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t*)":path", (uint8_t*)g.path, 5, strlen(g.path), NGHTTP2_NV_FLAG_NONE},
        {(uint8_t*)":authority", (uint8_t*)g.authority, 10, strlen(g.authority), NGHTTP2_NV_FLAG_NONE},
        {(uint8_t*)"content-type", (uint8_t*)"application/grpc", 12, 16, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t*)"te", (uint8_t*)"trailers", 2, 8, NGHTTP2_NV_FLAG_NONE},
    };
    nghttp2_data_provider body = {.source = {.ptr = k}, .read_callback = body_read};
    if (nghttp2_submit_request(c->session, NULL, hdrs, sizeof hdrs / sizeof hdrs[0], &body, k) < 0) {
      fprintf(stderr, "rpc-load: nghttp2_submit_request failed\n");
      exit(1);
    }
    ++c->open;
  }
}

// Writes what nghttp2 has to send; keeps the rest for EPOLLOUT.
static int flush(struct conn* c, int ep) {
  // Everything nghttp2 has to send (a call's HEADERS and DATA, WINDOW_UPDATEs) goes out in
  // one send, as gRPC clients write it: a send per frame doubled the segments, the client's
  // syscalls and the server's receive wake-ups per call.
  for (;;) {
    const uint8_t* data;
    ssize_t n = nghttp2_session_mem_send(c->session, &data);
    if (n < 0)
      return -1;
    if (n == 0)
      break;
    if (c->out_len + (size_t)n > c->out_cap) {
      c->out_cap = (c->out_len + (size_t)n) * 2;
      c->out = realloc(c->out, c->out_cap);
      if (!c->out)
        die("realloc");
    }
    memcpy(c->out + c->out_len, data, (size_t)n);
    c->out_len += (size_t)n;
  }
  if (c->out_len > 0) {
    ssize_t w = send(c->fd, c->out, c->out_len, MSG_NOSIGNAL);
    if (w < 0 && errno != EAGAIN)
      return -1;
    if (w > 0) {
      memmove(c->out, c->out + w, c->out_len - (size_t)w);
      c->out_len -= (size_t)w;
    }
  }
  int want = c->out_len > 0;
  if (want != c->want_out) {
    struct epoll_event ev = {.events = EPOLLIN | (want ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
    c->want_out = want;
  }
  return 0;
}

static int cmp64(const void* a, const void* b) {
  int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return x < y ? -1 : x > y;
}

static double pct(double q) {
  if (g.nlat == 0)
    return 0;
  size_t i = (size_t)(q * (double)g.nlat);
  if (i >= g.nlat)
    i = g.nlat - 1;
  return (double)g.lat[i] / 1e3;
}

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (!strcmp(k, "--port"))
      g.port = atoi(v);
    else if (!strcmp(k, "--rps"))
      g.rps = atoi(v);
    else if (!strcmp(k, "--conns"))
      g.conns = atoi(v);
    else if (!strcmp(k, "--streams"))
      g.streams = atoi(v);
    else if (!strcmp(k, "--warmup"))
      g.warmup = atof(v);
    else if (!strcmp(k, "--duration"))
      g.duration = atof(v);
    else if (!strcmp(k, "--tick-us"))
      g.tick_us = atoi(v);
    else if (!strcmp(k, "--path"))
      g.path = v;
    else {
      fprintf(stderr, "rpc-load: unknown option %s\n", k);
      return 2;
    }
  }
  if (argc % 2 == 0 || g.port <= 0 || g.rps <= 0 || g.conns <= 0 || g.streams <= 0 || g.streams > MAX_STREAMS ||
      g.duration <= 0 || g.warmup < 0 || g.tick_us < 0) {
    fprintf(stderr, "usage: rpc-load --port P --rps R [--conns C] [--streams S<=%d] [--warmup S] [--duration S] "
                    "[--tick-us T] [--path P]\n", MAX_STREAMS);
    return 2;
  }
  snprintf(g.authority, sizeof g.authority, "127.0.0.1:%d", g.port);
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // wake when a call is due, not up to 50 µs later

  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0)
    die("epoll_create1");
  nghttp2_session_callbacks* cbs;
  nghttp2_session_callbacks_new(&cbs);
  nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data);
  nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_close);
  struct conn* cs = calloc((size_t)g.conns, sizeof *cs);
  if (!cs)
    die("calloc");
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)g.port),
                           .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  for (int i = 0; i < g.conns; ++i) {
    struct conn* c = &cs[i];
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
      die("socket");
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(c->fd, (struct sockaddr*)&sa, sizeof sa) != 0)
      die("connect");
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    nghttp2_session_client_new(&c->session, cbs, c);
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
                                   {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, (1 << 24) - 1}};
    nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, iv, 2);
    nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0, (1 << 24) - 1);
    for (int s = 0; s < MAX_STREAMS; ++s)
      c->free_list[s] = MAX_STREAMS - 1 - s;
    c->nfree = MAX_STREAMS;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0)
      die("epoll_ctl");
    if (flush(c, ep) != 0) {
      fprintf(stderr, "rpc-load: connection %d: send failed\n", i);
      return 1;
    }
  }

  const int64_t interval = (int64_t)(1e9 / g.rps);
  const int64_t start = now_ns() + 1000000;  // 1 ms to take the servers' SETTINGS
  g.window_start = start + (int64_t)(g.warmup * 1e9);
  g.window_end = g.window_start + (int64_t)(g.duration * 1e9);
  const int64_t give_up = g.window_end + 5000000000LL;
  int64_t next = start;
  long seq = 0;
  uint8_t buf[65536];
  struct epoll_event evs[64];
  for (;;) {
    int64_t now = now_ns();
    // Calls due now, spread over the connections in turn.
    while (next <= now && next < g.window_end) {
      if (measured(next))
        ++g.measured_due;
      queue_push(&cs[seq % g.conns], next);
      cs[seq % g.conns].dirty = 1;
      ++seq;
      next = start + seq * interval;
    }
    int open = 0;
    for (int i = 0; i < g.conns; ++i) {
      struct conn* c = &cs[i];
      if (c->dirty || c->want_out) {
        c->dirty = 0;
        submit_due(c, now);
        if (flush(c, ep) != 0) {
          fprintf(stderr, "rpc-load: connection %d: send failed: %s\n", i, strerror(errno));
          goto done;
        }
      }
      open += c->open + (int)c->qlen;
    }
    if (next >= g.window_end && open == 0)
      break;
    if (now >= give_up)
      break;
    int64_t wake = next < g.window_end ? next : give_up;
    if (g.tick_us > 0 && next < g.window_end) {  // the first tick at or after the next due call
      const int64_t tick = (int64_t)g.tick_us * 1000;
      wake = start + (next - start + tick - 1) / tick * tick;
    }
    int64_t wait = wake - now;
    if (wait < 0)
      wait = 0;
    struct timespec ts = {.tv_sec = wait / 1000000000, .tv_nsec = wait % 1000000000};
    int n = epoll_pwait2(ep, evs, 64, &ts, NULL);
    if (n < 0 && errno != EINTR)
      die("epoll_pwait2");
    for (int e = 0; e < n; ++e) {
      struct conn* c = evs[e].data.ptr;
      c->dirty = 1;
      if (evs[e].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
        for (;;) {
          ssize_t r = recv(c->fd, buf, sizeof buf, 0);
          if (r < 0 && errno == EAGAIN)
            break;
          if (r <= 0) {
            fprintf(stderr, "rpc-load: the server closed a connection (%s)\n", r == 0 ? "end of stream" : strerror(errno));
            goto done;
          }
          if (nghttp2_session_mem_recv(c->session, buf, (size_t)r) < 0) {
            fprintf(stderr, "rpc-load: HTTP/2 protocol error from the server\n");
            goto done;
          }
        }
      }
    }
  }
done:;
  long unfinished = g.measured_due - (long)g.nlat - g.errors;
  qsort(g.lat, g.nlat, sizeof *g.lat, cmp64);
  printf("RPC_RESULT {\"calls\":%zu,\"errors\":%ld,\"unfinished\":%ld,\"duration_s\":%.3f,\"target_rps\":%d,"
         "\"calls_per_sec\":%.1f,\"p50_us\":%.1f,\"p90_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f,"
         "\"max_send_lag_us\":%.1f,\"conns\":%d,\"streams\":%d,\"tick_us\":%d}\n",
         g.nlat, g.errors, unfinished, g.duration, g.rps, (double)g.nlat / g.duration, pct(0.50), pct(0.90), pct(0.99),
         pct(0.999), g.nlat ? (double)g.lat[g.nlat - 1] / 1e3 : 0.0, (double)g.max_lag / 1e3, g.conns, g.streams, g.tick_us);
  fflush(stdout);
  return g.errors == 0 && unfinished == 0 && g.nlat > 0 ? 0 : 1;
}
