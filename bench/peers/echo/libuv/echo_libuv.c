/* echo-libuv: the `echo` suite's TCP echo server (docs/workloads.md) on libuv, in C
 * as libuv's users write it.
 *
 *   echo-libuv --port P [--threads W]
 *
 * One uv_loop_t per thread, each with its own listening socket on 127.0.0.1:P with
 * SO_REUSEPORT, so the kernel spreads connections over the loops and a connection
 * stays on one loop. libuv 1.44 (Debian 12) has no UV_TCP_REUSEPORT yet (it came in
 * 1.49), so the socket is made and bound by hand and given to libuv with uv_tcp_open.
 *
 * A connection owns one 16 KiB buffer that alloc_cb hands out. What arrives is sent
 * back with uv_try_write, which writes at once when the socket has room (nearly
 * always); whatever it could not write goes out with uv_write, and reading pauses
 * until that write is done so the buffer is not overwritten under it. TCP_NODELAY on
 * every accepted socket.
 */
#define _GNU_SOURCE
#include <uv.h>

#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { BUFFER_SIZE = 16 * 1024 };

typedef struct connection {
    uv_tcp_t tcp; /* first: a uv_handle_t* / uv_stream_t* to it is the connection */
    uv_write_t write_req;
    char buffer[BUFFER_SIZE];
} connection;

typedef struct worker {
    uv_loop_t loop;
    uv_tcp_t listener;
    uv_thread_t thread;
} worker;

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    connection *c = (connection *)handle;
    *buf = uv_buf_init(c->buffer, sizeof c->buffer);
}

static void on_closed(uv_handle_t *handle) { free(handle); }

static void drop(uv_stream_t *stream) {
    if (!uv_is_closing((uv_handle_t *)stream)) uv_close((uv_handle_t *)stream, on_closed);
}

static void on_written(uv_write_t *req, int status) {
    connection *c = req->data;
    if (status < 0 || uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) drop((uv_stream_t *)&c->tcp);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
    if (nread < 0) { /* UV_EOF or a reset */
        drop(stream);
        return;
    }
    if (nread == 0) return;
    uv_buf_t out = uv_buf_init(buf->base, (unsigned)nread);
    int sent = uv_try_write(stream, &out, 1);
    if (sent == nread) return;
    if (sent == UV_EAGAIN) sent = 0;
    if (sent < 0) {
        drop(stream);
        return;
    }
    connection *c = (connection *)stream;
    uv_read_stop(stream);
    out = uv_buf_init(buf->base + sent, (unsigned)(nread - sent));
    c->write_req.data = c;
    if (uv_write(&c->write_req, stream, &out, 1, on_written) != 0) drop(stream);
}

static void on_connection(uv_stream_t *listener, int status) {
    if (status < 0) return; /* e.g. EMFILE: libuv keeps listening */
    connection *c = malloc(sizeof *c);
    if (c == NULL) return;
    uv_tcp_init(listener->loop, &c->tcp);
    if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
        uv_close((uv_handle_t *)&c->tcp, on_closed);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) drop((uv_stream_t *)&c->tcp);
}

/* A bound (not yet listening) SO_REUSEPORT socket on 127.0.0.1:port, or -errno. */
static int reuseport_socket(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    int on = 1;
    struct sockaddr_in at;
    memset(&at, 0, sizeof at);
    at.sin_family = AF_INET;
    at.sin_port = htons((unsigned short)port);
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) != 0 ||
        bind(fd, (struct sockaddr *)&at, sizeof at) != 0) {
        int err = -errno;
        close(fd);
        return err;
    }
    return fd;
}

static int worker_listen(worker *w, int port) {
    int rc = uv_loop_init(&w->loop);
    if (rc != 0) return rc;
    int fd = reuseport_socket(port);
    if (fd < 0) return uv_translate_sys_error(-fd);
    uv_tcp_init(&w->loop, &w->listener);
    if ((rc = uv_tcp_open(&w->listener, fd)) != 0) return rc;
    return uv_listen((uv_stream_t *)&w->listener, SOMAXCONN > 4096 ? SOMAXCONN : 4096, on_connection);
}

static void worker_run(void *arg) { uv_run(&((worker *)arg)->loop, UV_RUN_DEFAULT); }

static void usage(const char *why) {
    fprintf(stderr, "error: %s\nusage: echo-libuv --port P [--threads W]\n", why);
    exit(2);
}

static int count_arg(const char *text, const char *flag) {
    char *end = NULL;
    long v = text ? strtol(text, &end, 10) : -1;
    if (text == NULL || *text == '\0' || *end != '\0' || v < 0 || v > 65535) usage(flag);
    return (int)v;
}

int main(int argc, char **argv) {
    int port = -1, threads = 1;
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) > 0) threads = CPU_COUNT(&cpus);
    for (int i = 1; i < argc; i += 2) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--port") == 0) port = count_arg(value, "--port needs a port number");
        else if (strcmp(argv[i], "--threads") == 0) threads = count_arg(value, "--threads needs a count");
        else usage("unknown argument");
    }
    if (port < 0) usage("--port is required");
    if (threads < 1) usage("--threads must be at least 1");

    worker *workers = calloc((size_t)threads, sizeof *workers);
    if (workers == NULL) return 1;
    for (int i = 0; i < threads; ++i) {
        int rc = worker_listen(&workers[i], port);
        if (rc != 0) {
            fprintf(stderr, "echo-libuv: listen on 127.0.0.1:%d: %s\n", port, uv_strerror(rc));
            return 1;
        }
    }
    for (int i = 1; i < threads; ++i) uv_thread_create(&workers[i].thread, worker_run, &workers[i]);
    worker_run(&workers[0]);
    for (int i = 1; i < threads; ++i) uv_thread_join(&workers[i].thread);
    return 0;
}
