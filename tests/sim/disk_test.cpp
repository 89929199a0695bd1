// The simulated disk (sim::world::crash, options::disk_space): what a power loss keeps and
// what a full disk does to writes made through a simulated ring.
#include <saturn/fs/file.hpp>
#include <saturn/fs/whole_file.hpp>
#include <saturn/sim/run.hpp>
#include <saturn/task.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/seeds.hpp"

using saturn::task;
namespace fs = saturn::fs;
namespace sim = saturn::sim;

namespace {

std::string read_plain(const std::string& path) {
  std::string out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return "<missing>";
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}

std::span<const std::byte> bytes(const std::string& s) { return std::as_bytes(std::span(s)); }

class SimDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = (std::filesystem::temp_directory_path() / "saturn-sim-disk-XXXXXX").string();
    ASSERT_NE(::mkdtemp(t.data()), nullptr);
    dir = t;
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string path(const char* name) const { return (std::filesystem::path(dir) / name).string(); }
  std::string dir;
};

task<void> write_sync_overwrite_crash(sim::world& w, std::string unsynced, std::string synced) {
  const std::string a = "first version, made durable";
  // Never synced: a crash leaves the (created) file empty.
  EXPECT_TRUE(co_await fs::write_file(unsynced, bytes(a), 0644, false));
  // Synced, then changed in the middle and grown without a sync.
  EXPECT_TRUE(co_await fs::write_file(synced, bytes(a), 0644, true));
  auto f = co_await fs::file::open(synced, O_WRONLY);
  EXPECT_TRUE(f.has_value());
  const std::string patch = "SECOND";
  EXPECT_TRUE(co_await f->write_at(bytes(patch), 6));
  const std::string tail = " and more that was never synced";
  EXPECT_TRUE(co_await f->write_at(bytes(tail), a.size()));
  EXPECT_EQ(read_plain(synced), "first SECONDn, made durable and more that was never synced");
  EXPECT_EQ(w.crash(), 2u);
  EXPECT_EQ(read_plain(unsynced), "");
  EXPECT_EQ(read_plain(synced), a);
  // After a sync, the change survives.
  EXPECT_TRUE(co_await f->write_at(bytes(patch), 6));
  EXPECT_TRUE(co_await f->datasync());
  EXPECT_EQ(w.crash(), 0u);
  EXPECT_EQ(read_plain(synced), "first SECONDn, made durable");
  (void)co_await f->close();
}

TEST_F(SimDisk, CrashUndoesWhatWasNotSynced) {
  sim::outcome o = sim::run(1, {}, [this](sim::world& w) {
    return write_sync_overwrite_crash(w, path("unsynced"), path("synced"));
  });
  ASSERT_TRUE(o.ok) << o.failure;
}

task<void> fill_the_disk(sim::world& w, std::string p, std::string q) {
  const std::string big(1500, 'x');
  auto r = co_await fs::write_file(p, bytes(big), 0644, false);
  EXPECT_FALSE(r.has_value()) << "1,500 bytes on a 1,000-byte disk";
  if (!r) {
    EXPECT_EQ(r.err().code, std::errc::no_space_on_device) << r.err().message();
  }
  EXPECT_EQ(read_plain(p).size(), 1000u) << "the first write is cut short at the last free byte";
  EXPECT_EQ(w.disk_used(), 1000u);
  // Overwrites need no space; growth does.
  auto f = co_await fs::file::open(p, O_WRONLY);
  EXPECT_TRUE(co_await f->write_at(bytes(std::string(10, 'y')), 0));
  auto grown = co_await f->write_at(bytes(std::string(10, 'z')), 1000);
  EXPECT_FALSE(grown.has_value());
  (void)co_await f->close();
  auto other = co_await fs::write_file(q, bytes(std::string("a")), 0644, false);
  EXPECT_FALSE(other.has_value());
}

TEST_F(SimDisk, AFullDiskCutsWritesShortThenFailsThem) {
  sim::options opts;
  opts.disk_space = 1000;
  sim::outcome o = sim::run(2, opts, [this](sim::world& w) { return fill_the_disk(w, path("big"), path("small")); });
  ASSERT_TRUE(o.ok) << o.failure;
}

}  // namespace

namespace {

TEST(SimFiles, WriteFileUnderShortWritesAFullDiskAndCrashes) {
  auto r = saturn::sim_scenarios::run_seeds("files", 200);
  ASSERT_TRUE(r.failed.ok) << "seed " << r.failed.seed << ": " << r.failed.failure;
  EXPECT_GT(r.faults, 100u) << "short writes and errors should have been injected";
}

}  // namespace
