// gen-tree: the deterministic tree generator of the `walk` suite (docs/workloads.md, "walk"),
// flag- and count-compatible with the peers' gen-tree.
//
//     gen-tree --shape {wide,deep,balanced,dense} ROOT
//     gen-tree --breadth B --depth D --files F ROOT
//     gen-tree --shape wide --expect          # only print the expected counts
//
// ROOT and every directory above the deepest level hold B subdirectories d0..d{B-1}, down
// to D levels below ROOT; every directory (ROOT included) holds F empty regular files
// f0..f{F-1}. On success it prints the counts a correct walker prints for ROOT:
//     <N> file(s)
//     <M> directories(s)
// ROOT must not exist yet (--force deletes and recreates it). Bad usage exits 2.
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

namespace {

struct shape {
  const char* name;
  long breadth, depth, files;
};
constexpr shape k_shapes[] = {
    {"balanced", 6, 5, 10},
    {"deep", 3, 9, 3},
    {"dense", 10, 3, 200},
    {"wide", 100, 2, 10},
};

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr,
               "usage: gen-tree [-h] [--shape {balanced,deep,dense,wide}] [--breadth B] [--depth D] "
               "[--files F] [--force] [--expect] [ROOT]\ngen-tree: error: %s\n",
               msg.c_str());
  std::exit(2);
}

long parse_int(const char* flag, const char* v) {
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v, &end, 10);
  if (v[0] == '\0' || *end != '\0' || errno != 0)
    usage_error(std::string("argument ") + flag + ": invalid int value: '" + v + "'");
  return x;
}

[[noreturn]] void die(const std::string& what, const std::string& path) {
  std::fprintf(stderr, "gen-tree: %s %s: %s\n", what.c_str(), path.c_str(), std::strerror(errno));
  std::exit(1);
}

int remove_entry(const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }

/// Builds the level below the open directory `dirfd` (its path is `path`, for errors).
void build(int dirfd, const std::string& path, long level, long breadth, long depth, long files) {
  char name[32];
  for (long i = 0; i < files; ++i) {
    std::snprintf(name, sizeof name, "f%ld", i);
    const int fd = ::openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
      die("cannot create", path + "/" + name);
    ::close(fd);
  }
  if (level >= depth)
    return;
  for (long i = 0; i < breadth; ++i) {
    std::snprintf(name, sizeof name, "d%ld", i);
    if (::mkdirat(dirfd, name, 0755) != 0)
      die("cannot create", path + "/" + name);
    const int sub = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sub < 0)
      die("cannot open", path + "/" + name);
    build(sub, path + "/" + name, level + 1, breadth, depth, files);
    ::close(sub);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* root = nullptr;
  const char* shape_name = nullptr;
  std::optional<long> breadth, depth, files;
  bool force = false, expect = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string val;
    bool has_val = false;
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
      val = a.substr(a.find('=') + 1);
      a = a.substr(0, a.find('='));
      has_val = true;
    }
    auto next = [&](const char* flag) -> const char* {
      if (has_val)
        return argv[i] + std::strlen(flag) + 1;
      if (i + 1 >= argc)
        usage_error(std::string("argument ") + flag + ": expected one argument");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::puts("usage: gen-tree [--shape S | --breadth B --depth D --files F] [--force] [--expect] [ROOT]");
      return 0;
    } else if (a == "--shape") {
      shape_name = next("--shape");
    } else if (a == "--breadth") {
      breadth = parse_int("--breadth", next("--breadth"));
    } else if (a == "--depth") {
      depth = parse_int("--depth", next("--depth"));
    } else if (a == "--files") {
      files = parse_int("--files", next("--files"));
    } else if (a == "--force") {
      force = true;
    } else if (a == "--expect") {
      expect = true;
    } else if (a.size() > 1 && a[0] == '-') {
      usage_error("unrecognized arguments: " + a);
    } else if (root == nullptr) {
      root = argv[i];
    } else {
      usage_error(std::string("unrecognized arguments: ") + argv[i]);
    }
  }
  long b = 0, d = 0, f = 0;
  if (shape_name != nullptr) {
    if (breadth || depth || files)
      usage_error("--shape excludes --breadth/--depth/--files");
    const shape* s = nullptr;
    for (const shape& k : k_shapes)
      if (std::strcmp(k.name, shape_name) == 0)
        s = &k;
    if (s == nullptr)
      usage_error(std::string("argument --shape: invalid choice: '") + shape_name +
                  "' (choose from 'balanced', 'deep', 'dense', 'wide')");
    b = s->breadth, d = s->depth, f = s->files;
  } else {
    if (!breadth || !depth || !files)
      usage_error("give --shape, or all of --breadth, --depth and --files");
    b = *breadth, d = *depth, f = *files;
  }
  if (b < 0 || d < 0 || f < 0)
    usage_error("--breadth, --depth and --files must be >= 0");

  // dirs = sum of breadth^level for level 0..depth, files = dirs * F (checked: the peer's
  // Python ints never overflow, so a count that does not fit is refused, not wrapped).
  std::uint64_t dirs = 0, level_count = 1, nfiles = 0;
  bool overflow = false;
  for (long lv = 0; lv <= d && !overflow; ++lv) {
    overflow |= __builtin_add_overflow(dirs, level_count, &dirs);
    if (lv < d)
      overflow |= __builtin_mul_overflow(level_count, static_cast<std::uint64_t>(b), &level_count);
  }
  overflow |= __builtin_mul_overflow(dirs, static_cast<std::uint64_t>(f), &nfiles);
  if (overflow) {
    std::fprintf(stderr, "gen-tree: the tree is too large to count in 64 bits\n");
    return 1;
  }
  if (!expect) {
    if (root == nullptr)
      usage_error("ROOT is required unless --expect is given");
    struct stat sb;
    if (::lstat(root, &sb) == 0) {
      if (!force) {
        std::fprintf(stderr, "gen-tree: %s exists (use --force to recreate it)\n", root);
        return 1;
      }
      if (S_ISDIR(sb.st_mode)) {
        if (::nftw(root, remove_entry, 64, FTW_DEPTH | FTW_PHYS) != 0)
          die("cannot delete", root);
      } else if (::unlink(root) != 0) {
        die("cannot delete", root);
      }
    }
    if (::mkdir(root, 0755) != 0)
      die("cannot create", root);
    const int fd = ::open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
      die("cannot open", root);
    build(fd, root, 0, b, d, f);
    ::close(fd);
  }
  std::printf("%llu file(s)\n%llu directories(s)\n", static_cast<unsigned long long>(nfiles),
              static_cast<unsigned long long>(dirs));
  return 0;
}
