// The files scenario (scenarios.hpp): whole files written with fs::write_file under short
// writes, a small disk and a crash at a seed-chosen moment.
#include <saturn/fs/whole_file.hpp>
#include <saturn/task.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/scenarios.hpp"

namespace saturn::sim_scenarios {
namespace {

[[noreturn]] void files_fail(const std::string& what) { throw std::runtime_error("files scenario: " + what); }

struct one_file {
  std::string path;
  std::vector<std::byte> data;
  bool sync = false;
  bool started = false;
  bool ok = false;          // write_file returned success
  std::string error;        // else what it said (empty: it never returned)
};

/// The file's contents now, read with plain system calls (not through the simulation).
std::vector<std::byte> contents(const std::string& path) {
  std::vector<std::byte> out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return out;
  std::byte buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0)
      break;
    out.insert(out.end(), buf, buf + n);
  }
  ::close(fd);
  return out;
}

task<void> writer(one_file* f, sim::world* w) {
  f->started = true;
  if (w->random_below(2) == 0)
    co_await sleep_for(std::chrono::microseconds(w->random_below(50)));
  auto r = co_await fs::write_file(f->path, f->data, 0644, f->sync);
  f->ok = r.has_value();
  if (!r)
    f->error = r.err().message();
}

task<void> write_then_cancel(task_group& g, std::vector<one_file>& files, sim::world& w) {
  for (one_file& f : files)
    g.spawn(writer(&f, &w));
  // The crash comes at a seed-chosen moment: sometimes after everything, often mid-way.
  co_await sleep_for(std::chrono::microseconds(w.random_below(400)));
  g.cancel();
}

}  // namespace

task<void> files_scenario(sim::world& w) {
  std::string dir_template = (std::filesystem::temp_directory_path() / "saturn-sim-files-XXXXXX").string();
  if (::mkdtemp(dir_template.data()) == nullptr)
    files_fail("mkdtemp failed");
  const std::filesystem::path dir = dir_template;
  std::vector<one_file> files(2 + w.random_below(8));
  for (std::size_t i = 0; i < files.size(); ++i) {
    one_file& f = files[i];
    std::string name = std::to_string(i);
    name.insert(0, 1, 'f');
    f.path = (dir / name).string();
    f.data.resize(1 + w.random_below(3 * 65536));  // past write_file's chunk sometimes
    for (std::size_t k = 0; k < f.data.size(); ++k)
      f.data[k] = static_cast<std::byte>((k * 131 + i * 7 + (k >> 8)) & 0xff);
    f.sync = w.random_below(3) != 0;
  }
  std::string problem;
  co_await task_group::run([&](task_group& g) -> task<void> { return write_then_cancel(g, files, w); });

  // Before the crash: a write that succeeded wrote everything (short writes and a full
  // disk must come back as errors, never as a partial file called done).
  for (const one_file& f : files)
    if (f.ok && contents(f.path) != f.data && problem.empty())
      problem = f.path + ": write_file succeeded but the file holds " + std::to_string(contents(f.path).size()) +
                " of " + std::to_string(f.data.size()) + " bytes, or other bytes";

  w.crash();

  // After it: what was acknowledged as synced is there, byte for byte.
  for (const one_file& f : files)
    if (problem.empty() && f.ok && f.sync && contents(f.path) != f.data)
      problem = f.path + ": write_file with sync succeeded, but after the crash the file holds " +
                std::to_string(contents(f.path).size()) + " of " + std::to_string(f.data.size()) + " bytes";
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (!problem.empty())
    files_fail(problem);
}

}  // namespace saturn::sim_scenarios
