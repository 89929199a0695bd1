// tree_hasher: the SHA-256 of every regular file under a directory, hashed concurrently;
// prints `<sha256>  <path>` lines sorted by path (the format of sha256sum), then a total.
//
// Shows: fs::walk (a parallel directory walk) feeding a channel while it runs, a few
// hasher tasks taking paths from that channel and reading each file through the ring
// (fs::file::open / read_at), and their results joined and merged at the end.
//
// Run:  example_tree_hasher DIR [--jobs N]
// Same lines as `find DIR -type f -exec sha256sum {} + | sort -k2` (for plain names).
// Exit status 1 if a file or directory could not be read (it says which on stderr).
#include <saturn/fs.hpp>
#include <saturn/sched.hpp>
#include <saturn/sync.hpp>
#include <saturn/task.hpp>

#include <openssl/evp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

using saturn::task;
namespace fs = saturn::fs;

struct hashed {
  std::string path;
  std::string hex;  // empty: the file could not be read
  std::uint64_t bytes = 0;
};

std::string to_hex(const unsigned char* p, unsigned n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s;
  for (unsigned i = 0; i < n; ++i)
    s += {digits[p[i] >> 4], digits[p[i] & 15]};
  return s;
}

// Reads `path` through the ring in 64 KiB pieces and hashes it.
task<hashed> hash_file(std::string path, std::vector<std::byte>& buf) {
  hashed out{path, "", 0};
  auto f = co_await fs::file::open(path);
  if (!f) {
    std::fprintf(stderr, "tree_hasher: %s\n", f.err().message().c_str());
    co_return out;
  }
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  for (;;) {
    auto n = co_await f->read_at(buf, out.bytes);
    if (!n) {
      std::fprintf(stderr, "tree_hasher: %s\n", n.err().message().c_str());
      EVP_MD_CTX_free(ctx);
      co_return out;
    }
    if (*n == 0)
      break;
    EVP_DigestUpdate(ctx, buf.data(), *n);
    out.bytes += *n;
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_DigestFinal_ex(ctx, md, &len);
  EVP_MD_CTX_free(ctx);
  out.hex = to_hex(md, len);
  co_return out;
}

// One of the hashers: takes paths until the channel is closed and empty.
task<std::vector<hashed>> hasher(saturn::channel<std::string>& paths) {
  std::vector<hashed> done;
  std::vector<std::byte> buf(64 * 1024);
  for (;;) {
    auto path = co_await paths.receive();
    if (!path)
      break;  // closed (the walk has ended) and drained
    done.push_back(co_await hash_file(std::move(*path), buf));
  }
  co_return done;
}

task<int> hash_tree(std::string root, unsigned jobs) {
  saturn::channel<std::string> paths(saturn::unbounded);
  std::vector<saturn::join_handle<std::vector<hashed>>> hashers;
  for (unsigned i = 0; i < jobs; ++i)
    hashers.push_back(saturn::spawn(hasher(paths)));

  bool failed = false;
  fs::walk_options opts;
  opts.on_error = [&failed](const fs::walk_error& e) {  // one call at a time
    std::fprintf(stderr, "tree_hasher: %s\n", e.message().c_str());
    failed = true;
  };
  // The visitor runs on the walk's workers, several at once: try_send is thread-safe and
  // never waits on an unbounded channel.
  auto walked = co_await fs::walk(root, opts, [&paths](const fs::walk_entry& e) {
    if (e.type == fs::entry_type::regular)
      (void)paths.try_send(std::string(e.path));
    return fs::walk_action::proceed;
  });
  paths.close();  // the hashers finish what is queued, then end
  if (!walked) {
    std::fprintf(stderr, "tree_hasher: %s\n", walked.err().message().c_str());
    failed = true;
  }

  std::vector<hashed> all;
  for (auto& h : hashers) {
    std::vector<hashed> part = co_await std::move(h);
    all.insert(all.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  std::sort(all.begin(), all.end(), [](const hashed& a, const hashed& b) { return a.path < b.path; });
  std::uint64_t files = 0, bytes = 0;
  for (const hashed& h : all) {
    if (h.hex.empty()) {
      failed = true;  // said on stderr already
      continue;
    }
    std::printf("%s  %s\n", h.hex.c_str(), h.path.c_str());
    ++files;
    bytes += h.bytes;
  }
  std::printf("total: %llu files, %llu bytes\n", static_cast<unsigned long long>(files),
              static_cast<unsigned long long>(bytes));
  co_return failed ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc != 2 && !(argc == 4 && std::string_view(argv[2]) == "--jobs")) {
    std::fprintf(stderr, "usage: %s DIR [--jobs N]\n", argv[0]);
    return 2;
  }
  saturn::thread_pool pool;
  const unsigned jobs = argc == 4 ? static_cast<unsigned>(std::atoi(argv[3])) : 4 * pool.threads();
  return pool.block_on(hash_tree(argv[1], std::max(jobs, 1u)));
}
