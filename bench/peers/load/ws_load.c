// ws-load: the arena suite's WebSocket echo load (HttpArena's echo-ws profile), a neutral
// client written with plain epoll (not saturn), so no server is measured with its own
// code on the other side.
//
//   ws-load --port P [--conns C] [--threads T] [--duration S] [--path /ws]
//
// Every connection sends HttpArena's upgrade request (the fixed key
// dGhlIHNhbXBsZSBub25jZQ==), requires `101` with Sec-WebSocket-Accept
// s3pPLMBiTxaQ9kYGzzhZRbK+xOo=, then runs a closed loop of one message in flight: a masked
// text frame `hello` (mask 12 34 56 78, HttpArena's frame), and the server's unmasked
// echo, checked byte for byte (opcode, length, payload), before the next one. Connections
// are spread over T threads, one epoll each. The measured window starts once every
// connection is upgraded (or has failed), waiting at most 10 s for that: a server still
// answering handshakes is not measured on its echo rate. After S seconds it prints one line:
//
//   WS_RESULT {"msgs":N,"duration_s":D,"msgs_per_sec":R,"p50_us":..,"p99_us":..,
//              "conns":C,"upgraded":U,"errors":E}
//
// errors counts failed connects, refused upgrades, wrong echoes and closed connections;
// the run is only good with errors = 0 and upgraded = C. Exit status 0 when it is good,
// 1 otherwise, 2 on bad usage. Latency: send of a frame to the end of its echo, in a
// log-linear histogram (1 µs .. 10 s, ~3 % resolution).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { st_handshake, st_wait_echo };

static const char k_accept[] = "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";
static const unsigned char k_frame[11] = {0x81, 0x85, 0x12, 0x34, 0x56, 0x78,
                                          'h' ^ 0x12, 'e' ^ 0x34, 'l' ^ 0x56, 'l' ^ 0x78, 'o' ^ 0x12};
static const unsigned char k_echo[7] = {0x81, 0x05, 'h', 'e', 'l', 'l', 'o'};

#define HIST_BUCKETS 1024
struct conn {
  int fd;
  int state;
  size_t have;        // bytes of the current answer read so far
  char buf[1024];     // the handshake answer, or the echo frame
  uint64_t sent_ns;   // when the frame in flight was sent
};

struct worker {
  pthread_t tid;
  int epfd;
  int nconns;
  struct conn* conns;
  uint64_t msgs, errors, upgraded;
  uint64_t hist[HIST_BUCKETS];
};

static int g_port = 0, g_conns = 512, g_threads = 2, g_duration = 5;
static const char* g_path = "/ws";
static volatile int g_stop = 0;
static volatile int g_measuring = 0;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// Bucket of a latency in ns: 32 linear steps per power of two of microseconds.
static int bucket_of(uint64_t ns) {
  uint64_t us = ns / 1000;
  if (us < 32) return (int)us;
  int lg = 63 - __builtin_clzll(us);  // us >= 32 -> lg >= 5
  int sub = (int)((us >> (lg - 5)) & 31);
  int b = 32 + (lg - 5) * 32 + sub;
  return b < HIST_BUCKETS ? b : HIST_BUCKETS - 1;
}
static double bucket_us(int b) {
  if (b < 32) return b;
  int lg = (b - 32) / 32 + 5, sub = (b - 32) % 32;
  return (double)((1ull << lg) + ((uint64_t)sub << (lg - 5)));
}

static void fail_conn(struct worker* w, struct conn* c) {
  __atomic_fetch_add(&w->errors, 1, __ATOMIC_RELAXED);  // main polls it (the handshake phase)
  if (c->fd >= 0) {
    epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
  }
  c->fd = -1;
}

static int send_all(int fd, const void* p, size_t n) {
  const char* s = p;
  while (n > 0) {
    ssize_t k = send(fd, s, n, MSG_NOSIGNAL);
    if (k < 0) {
      if (errno == EINTR) continue;
      return -1;  // a non-blocking socket with a full buffer: not expected for 11 bytes
    }
    s += k;
    n -= (size_t)k;
  }
  return 0;
}

static void send_frame(struct worker* w, struct conn* c) {
  c->have = 0;
  c->state = st_wait_echo;
  c->sent_ns = now_ns();
  if (send_all(c->fd, k_frame, sizeof k_frame) != 0) fail_conn(w, c);
}

static void on_readable(struct worker* w, struct conn* c) {
  for (;;) {
    ssize_t k = recv(c->fd, c->buf + c->have, sizeof c->buf - c->have, 0);
    if (k < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      fail_conn(w, c);
      return;
    }
    if (k == 0) {  // the server closed
      fail_conn(w, c);
      return;
    }
    c->have += (size_t)k;
    if (c->state == st_handshake) {
      char* end = memmem(c->buf, c->have, "\r\n\r\n", 4);
      if (end == NULL) {
        if (c->have == sizeof c->buf) fail_conn(w, c);
        if (c->fd < 0) return;
        continue;
      }
      size_t head = (size_t)(end - c->buf) + 4;
      if (c->have < 12 || memcmp(c->buf, "HTTP/1.1 101", 12) != 0 ||
          memmem(c->buf, head, k_accept, sizeof k_accept - 1) == NULL || c->have != head) {
        fail_conn(w, c);  // refused, a wrong accept key, or bytes nobody asked for
        return;
      }
      __atomic_fetch_add(&w->upgraded, 1, __ATOMIC_RELAXED);  // main polls it (the handshake phase)
      send_frame(w, c);
      if (c->fd < 0) return;
      continue;
    }
    if (c->have < sizeof k_echo) continue;
    if (c->have != sizeof k_echo || memcmp(c->buf, k_echo, sizeof k_echo) != 0) {
      fail_conn(w, c);  // a wrong echo, or an unsolicited frame
      return;
    }
    if (g_measuring) {
      w->msgs++;
      w->hist[bucket_of(now_ns() - c->sent_ns)]++;
    }
    if (g_stop) return;
    send_frame(w, c);
    if (c->fd < 0) return;
  }
}

static int open_conn(struct worker* w, struct conn* c) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)g_port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(fd, (struct sockaddr*)&a, sizeof a) != 0) {  // blocking connect: loopback
    close(fd);
    return -1;
  }
  char req[512];
  int n = snprintf(req, sizeof req,
                   "GET %s HTTP/1.1\r\nHost: localhost:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
                   g_path, g_port);
  if (send_all(fd, req, (size_t)n) != 0) {
    close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  c->fd = fd;
  c->state = st_handshake;
  c->have = 0;
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
  return epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void* run_worker(void* arg) {
  struct worker* w = arg;
  struct epoll_event evs[256];
  while (!g_stop) {
    int n = epoll_wait(w->epfd, evs, 256, 100);
    for (int i = 0; i < n; i++) on_readable(w, evs[i].data.ptr);
  }
  return NULL;
}

static int usage(void) {
  fprintf(stderr, "usage: ws-load --port P [--conns C] [--threads T] [--duration S] [--path /ws]\n");
  return 2;
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v == NULL) return usage();
    if (strcmp(argv[i], "--port") == 0) g_port = atoi(v);
    else if (strcmp(argv[i], "--conns") == 0) g_conns = atoi(v);
    else if (strcmp(argv[i], "--threads") == 0) g_threads = atoi(v);
    else if (strcmp(argv[i], "--duration") == 0) g_duration = atoi(v);
    else if (strcmp(argv[i], "--path") == 0) g_path = v;
    else return usage();
    i++;
  }
  if (g_port <= 0 || g_port > 65535 || g_conns <= 0 || g_threads <= 0 || g_duration <= 0) return usage();
  if (g_threads > g_conns) g_threads = g_conns;
  struct worker* ws = calloc((size_t)g_threads, sizeof *ws);
  struct conn* conns = calloc((size_t)g_conns, sizeof *conns);
  if (ws == NULL || conns == NULL) return 1;
  uint64_t connect_errors = 0;
  for (int t = 0, next = 0; t < g_threads; t++) {
    struct worker* w = &ws[t];
    w->epfd = epoll_create1(0);
    w->nconns = g_conns / g_threads + (t < g_conns % g_threads);
    w->conns = conns + next;
    next += w->nconns;
    for (int i = 0; i < w->nconns; i++) {
      w->conns[i].fd = -1;
      if (open_conn(w, &w->conns[i]) != 0) connect_errors++;
    }
  }
  for (int t = 0; t < g_threads; t++) pthread_create(&ws[t].tid, NULL, run_worker, &ws[t]);
  // Every connection has had its upgrade sent; the measured window starts once every one
  // is upgraded or has failed (at most 10 s: then the run counts as not upgraded).
  const uint64_t handshake_deadline = now_ns() + 10000000000ull;
  for (;;) {
    uint64_t done = connect_errors;
    for (int t = 0; t < g_threads; t++)
      done += __atomic_load_n(&ws[t].upgraded, __ATOMIC_RELAXED) + __atomic_load_n(&ws[t].errors, __ATOMIC_RELAXED);
    if (done >= (uint64_t)g_conns || now_ns() >= handshake_deadline) break;
    struct timespec ms = {.tv_sec = 0, .tv_nsec = 1000000};
    nanosleep(&ms, NULL);
  }
  uint64_t t0 = now_ns();
  g_measuring = 1;
  struct timespec d = {.tv_sec = g_duration, .tv_nsec = 0};
  while (nanosleep(&d, &d) != 0 && errno == EINTR) {
  }
  g_measuring = 0;
  double secs = (double)(now_ns() - t0) / 1e9;
  g_stop = 1;
  uint64_t msgs = 0, errors = connect_errors, upgraded = 0, hist[HIST_BUCKETS] = {0};
  for (int t = 0; t < g_threads; t++) {
    pthread_join(ws[t].tid, NULL);
    msgs += ws[t].msgs;
    errors += ws[t].errors;
    upgraded += ws[t].upgraded;
    for (int b = 0; b < HIST_BUCKETS; b++) hist[b] += ws[t].hist[b];
  }
  double p50 = 0, p99 = 0;
  uint64_t seen = 0;
  for (int b = 0; b < HIST_BUCKETS && msgs > 0; b++) {
    seen += hist[b];
    if (p50 == 0 && seen * 2 >= msgs) p50 = bucket_us(b);
    if (seen * 100 >= msgs * 99) {
      p99 = bucket_us(b);
      break;
    }
  }
  printf("WS_RESULT {\"msgs\":%llu,\"duration_s\":%.3f,\"msgs_per_sec\":%.1f,\"p50_us\":%.1f,\"p99_us\":%.1f,"
         "\"conns\":%d,\"upgraded\":%llu,\"errors\":%llu}\n",
         (unsigned long long)msgs, secs, secs > 0 ? (double)msgs / secs : 0.0, p50, p99, g_conns,
         (unsigned long long)upgraded, (unsigned long long)errors);
  for (int i = 0; i < g_conns; i++)
    if (conns[i].fd >= 0) close(conns[i].fd);
  return errors == 0 && upgraded == (uint64_t)g_conns && msgs > 0 ? 0 : 1;
}
