/* http_client-curl: the `http-client` suite's libcurl peer (README.md). T threads, each
 * with its own curl multi handle driving C/T easy handles (the first threads take one
 * more when C is not a multiple of T). An easy handle is re-added to its multi handle
 * as soon as its transfer completes, so each keeps its keep-alive connection from the
 * multi handle's connection cache (CURLMOPT_MAX_HOST_CONNECTIONS = its share) for D
 * seconds. Every answer is checked: CURLE_OK, status 200, the exact body gathered by
 * the write callback; anything else is an error. Prints the suite's JSON line with the
 * process's user+sys CPU over the measured window (getrusage RUSAGE_SELF).
 *
 *   http_client-curl --url U [--concurrency 64] [--duration-s 5] [--threads 2] [--body T]
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static const char* g_url;
static const char* g_want = "Hello, World!";
static size_t g_want_len;
static struct timespec g_end;
static atomic_ullong g_ok, g_bad;

struct xfer {
    CURL* easy;
    char buf[256];
    size_t len;
    int overflow;
};

static size_t on_write(char* p, size_t size, size_t n, void* user) {
    struct xfer* x = user;
    size_t k = size * n;
    if (x->len + k > sizeof x->buf) {
        x->overflow = 1;
    } else {
        memcpy(x->buf + x->len, p, k);
        x->len += k;
    }
    return k;
}

static int before_end(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec < g_end.tv_sec || (now.tv_sec == g_end.tv_sec && now.tv_nsec < g_end.tv_nsec);
}

struct worker_arg {
    int handles;
};

static void* worker(void* argp) {
    struct worker_arg* a = argp;
    CURLM* multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)a->handles);
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, (long)a->handles);
    struct xfer* xs = calloc((size_t)a->handles, sizeof *xs);
    for (int i = 0; i < a->handles; ++i) {
        CURL* e = curl_easy_init();
        xs[i].easy = e;
        curl_easy_setopt(e, CURLOPT_URL, g_url);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &xs[i]);
        curl_easy_setopt(e, CURLOPT_PRIVATE, &xs[i]);
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
        curl_multi_add_handle(multi, e);
    }
    unsigned long long ok = 0, bad = 0;
    int running = a->handles;
    while (running > 0) {
        int still = 0;
        curl_multi_perform(multi, &still);
        CURLMsg* m;
        int left;
        while ((m = curl_multi_info_read(multi, &left)) != NULL) {
            if (m->msg != CURLMSG_DONE)
                continue;
            struct xfer* x;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char**)&x);
            long status = 0;
            curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &status);
            CURLcode rc = m->data.result;
            int good = rc == CURLE_OK && status == 200 && !x->overflow && x->len == g_want_len &&
                       memcmp(x->buf, g_want, g_want_len) == 0;
            if (good) {
                ++ok;
            } else if (++bad <= 3) {
                fprintf(stderr, "http_client-curl: bad answer: %s, status %ld, %zu bytes\n",
                        curl_easy_strerror(rc), status, x->len);
            }
            x->len = 0;
            x->overflow = 0;
            curl_multi_remove_handle(multi, x->easy);
            if (before_end())
                curl_multi_add_handle(multi, x->easy);
            else
                --running;
        }
        if (running > 0)
            curl_multi_poll(multi, NULL, 0, 100, NULL);
    }
    for (int i = 0; i < a->handles; ++i)
        curl_easy_cleanup(xs[i].easy);
    curl_multi_cleanup(multi);
    free(xs);
    atomic_fetch_add(&g_ok, ok);
    atomic_fetch_add(&g_bad, bad);
    return NULL;
}

static void usage(const char* why) {
    fprintf(stderr, "usage: http_client-curl --url U [--concurrency C] [--duration-s D] [--threads T] [--body TEXT] (%s)\n", why);
    exit(2);
}

static double tv(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec / 1e6; }

int main(int argc, char** argv) {
    int conc = 64, threads = 2;
    double dur = 5;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc)
            usage("a flag needs a value");
        const char* v = argv[i + 1];
        if (!strcmp(argv[i], "--url")) g_url = v;
        else if (!strcmp(argv[i], "--concurrency")) conc = atoi(v);
        else if (!strcmp(argv[i], "--duration-s")) dur = atof(v);
        else if (!strcmp(argv[i], "--threads")) threads = atoi(v);
        else if (!strcmp(argv[i], "--body")) g_want = v;
        else usage("unknown flag");
    }
    if (!g_url || conc < 1 || dur <= 0 || threads < 1 || threads > conc)
        usage("--url is required; counts must be positive, threads <= concurrency");
    g_want_len = strlen(g_want);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    struct rusage u0, u1;
    struct timespec t0, t1;
    getrusage(RUSAGE_SELF, &u0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long long ns = (long long)(dur * 1e9);
    g_end.tv_sec = t0.tv_sec + (time_t)(ns / 1000000000LL);
    g_end.tv_nsec = t0.tv_nsec + (long)(ns % 1000000000LL);
    if (g_end.tv_nsec >= 1000000000L) { g_end.tv_sec++; g_end.tv_nsec -= 1000000000L; }
    pthread_t* th = calloc((size_t)threads, sizeof *th);
    struct worker_arg* args = calloc((size_t)threads, sizeof *args);
    for (int i = 0; i < threads; ++i) {
        args[i].handles = conc / threads + (i < conc % threads);
        pthread_create(&th[i], NULL, worker, &args[i]);
    }
    for (int i = 0; i < threads; ++i)
        pthread_join(th[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    getrusage(RUSAGE_SELF, &u1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    double user = tv(u1.ru_utime) - tv(u0.ru_utime), sys = tv(u1.ru_stime) - tv(u0.ru_stime);
    unsigned long long n = atomic_load(&g_ok), e = atomic_load(&g_bad);
    printf("{\"suite\":\"http-client\",\"scenario\":\"get_keepalive_%d\",\"runtime\":\"curl\",\"threads\":%d,"
           "\"concurrency\":%d,\"requests\":%llu,\"errors\":%llu,\"wall_s\":%.3f,\"ops_per_sec\":%.0f,"
           "\"cpu_user_s\":%.3f,\"cpu_sys_s\":%.3f,\"cpu_us_per_req\":%.3f}\n",
           conc, threads, conc, n, e, wall, (double)n / wall, user, sys, n ? (user + sys) * 1e6 / (double)n : 0.0);
    curl_global_cleanup();
    free(th);
    free(args);
    return e == 0 && n > 0 ? 0 : 1;
}
