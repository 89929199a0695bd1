// The coroutine-frame allocator (detail::frame_allocate / frame_deallocate): a randomized
// alloc/free sequence with fill patterns checked against an oracle of live blocks, frees
// on another thread, 200,000 live frames, the operator-new path above 512 bytes, and
// reuse of frames cached by threads that exit.
//
// Sanitizer builds route every frame through operator new (frame_allocator.hpp); the
// content and overlap checks run there too, the recycling checks are skipped.
#include <gtest/gtest.h>
#include <saturn/task/frame_allocator.hpp>

#include <malloc.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#if defined(SATURN_ASAN)
// From the sanitizer runtime (sanitizer/allocator_interface.h, which g++ 12 does not ship).
extern "C" int __sanitizer_get_ownership(const volatile void* p);
extern "C" std::size_t __sanitizer_get_allocated_size(const volatile void* p);
#endif

namespace {

using saturn::detail::frame_allocate;
using saturn::detail::frame_deallocate;

#if defined(SATURN_ASAN) || defined(SATURN_TSAN)
constexpr bool k_recycling = false;
#else
constexpr bool k_recycling = true;
#endif
constexpr const char* k_no_recycling = "sanitizer build: frames go to operator new, nothing is recycled";

struct block {
  unsigned char* p;
  std::size_t size;
  std::uint32_t id;
};

unsigned char pattern_byte(std::uint32_t id, std::size_t i) noexcept {
  return static_cast<unsigned char>((id * 2654435761u) >> 13 ^ (i * 131u) ^ (i >> 8));
}
void fill(const block& b) {
  for (std::size_t i = 0; i < b.size; ++i)
    b.p[i] = pattern_byte(b.id, i);
}
bool intact(const block& b) {
  for (std::size_t i = 0; i < b.size; ++i)
    if (b.p[i] != pattern_byte(b.id, i))
      return false;
  return true;
}
block make(std::size_t size, std::uint32_t id) {
  block b{static_cast<unsigned char*>(frame_allocate(size)), size, id};
  fill(b);
  return b;
}
void release(const block& b) { frame_deallocate(b.p, b.size); }

/// No two live blocks overlap (sorted by address, each ends before the next begins).
bool disjoint(std::vector<block> live) {
  std::sort(live.begin(), live.end(), [](const block& a, const block& b) { return a.p < b.p; });
  for (std::size_t i = 1; i < live.size(); ++i)
    if (live[i - 1].p + live[i - 1].size > live[i].p)
      return false;
  return true;
}

/// Aligned enough for any object of `size` bytes: an object's size is a multiple of its
/// alignment, so a size that is an odd multiple of 8 (after rounding up to 8) needs 8;
/// every other size gets the default new alignment (16).
bool aligned(const void* p, std::size_t size) noexcept {
  const std::size_t rounded = (size + 7) / 8 * 8;
  const std::size_t need = rounded % 16 == 8 ? 8 : __STDCPP_DEFAULT_NEW_ALIGNMENT__;
  return reinterpret_cast<std::uintptr_t>(p) % need == 0;
}

}  // namespace

TEST(task_frame_allocator, size_classes) {
  using saturn::detail::frame_class;
  using saturn::detail::frame_class_size;
  EXPECT_EQ(frame_class(1), 0u);
  EXPECT_EQ(frame_class(8), 0u);
  EXPECT_EQ(frame_class(9), 1u);
  EXPECT_EQ(frame_class(104), 12u);
  EXPECT_EQ(frame_class_size(frame_class(104)), 104u);  // a task waiting on an event
  EXPECT_EQ(frame_class_size(frame_class(105)), 112u);
  EXPECT_EQ(frame_class(512), 63u);
  EXPECT_EQ(saturn::detail::frame_max_small, 512u);
}

// 30,000 random actions (allocate 1..600 bytes, or free a random live block); every block
// is filled with a pattern of its own and checked when freed and at checkpoints.
TEST(task_frame_allocator, random_alloc_free_against_oracle) {
  std::mt19937 rng(0xf4a3e);
  std::vector<block> live;
  std::uint32_t next_id = 1;
  int corrupted = 0;
  int misaligned = 0;
  for (int step = 0; step < 30'000; ++step) {
    if (live.empty() || rng() % 100 < 55) {
      block b = make(1 + rng() % 600, next_id++);
      misaligned += aligned(b.p, b.size) ? 0 : 1;
      live.push_back(b);
    } else {
      const std::size_t i = rng() % live.size();
      corrupted += intact(live[i]) ? 0 : 1;
      release(live[i]);
      live[i] = live.back();
      live.pop_back();
    }
    if (step % 5000 == 4999) {
      ASSERT_TRUE(disjoint(live)) << "overlapping live frames at step " << step;
      for (const block& b : live)
        corrupted += intact(b) ? 0 : 1;
    }
  }
  for (const block& b : live) {
    corrupted += intact(b) ? 0 : 1;
    release(b);
  }
  EXPECT_EQ(corrupted, 0);
  EXPECT_EQ(misaligned, 0);
}

// Thread A allocates and fills; thread B checks and frees them (they go on B's lists),
// then allocates the same sizes again — in a recycling build B gets exactly those frames
// back, with no new memory.
TEST(task_frame_allocator, free_on_another_thread_then_allocate_there) {
  constexpr int n = 2000;
  std::vector<block> from_a;
  std::thread a([&] {
    std::mt19937 rng(17);
    for (int i = 0; i < n; ++i)
      from_a.push_back(make(1 + rng() % 512, static_cast<std::uint32_t>(i + 1)));
  });
  a.join();
  int corrupted = 0;
  std::vector<block> from_b;
  std::thread b([&] {
    for (const block& x : from_a) {
      corrupted += intact(x) ? 0 : 1;
      release(x);
    }
    for (const block& x : from_a)  // same sizes, in the same order
      from_b.push_back(make(x.size, x.id + 100'000));
    for (const block& x : from_b) {
      corrupted += intact(x) ? 0 : 1;
      release(x);
    }
  });
  b.join();
  EXPECT_EQ(corrupted, 0);
  ASSERT_EQ(from_b.size(), from_a.size());
  if (!k_recycling) {
    GTEST_SKIP() << k_no_recycling;
  }
  std::set<unsigned char*> freed;
  for (const block& x : from_a)
    freed.insert(x.p);
  int reused = 0;
  for (const block& x : from_b)
    reused += freed.count(x.p) != 0 ? 1 : 0;
  EXPECT_EQ(reused, n) << "frames freed on thread B were not reused by B's own allocations";
}

// Ping-pong: two threads keep handing batches of frames to each other to free; the data
// in every frame survives the trip.
TEST(task_frame_allocator, producer_consumer_threads) {
  constexpr int rounds = 40;
  constexpr int per_round = 3000;
  int corrupted = 0;
  std::vector<block> batch;
  std::uint32_t id = 1;
  for (int r = 0; r < rounds; ++r) {
    std::thread producer([&] {
      std::mt19937 rng(static_cast<unsigned>(r));
      for (int i = 0; i < per_round; ++i)
        batch.push_back(make(1 + rng() % 512, id++));
    });
    producer.join();
    std::thread consumer([&] {
      for (const block& b : batch) {
        corrupted += intact(b) ? 0 : 1;
        release(b);
      }
      batch.clear();
    });
    consumer.join();
  }
  EXPECT_EQ(corrupted, 0);
}

// The HTTP-soak pattern: one long-lived thread allocates frames, another frees them (a
// task spawned on one worker, finished on the other), round after round. The frames the
// consumer holds back are bounded in bytes, so after the first rounds the producer finds
// every frame it needs in the global pool: the mapped chunks stop growing.
TEST(task_frame_allocator, one_way_traffic_between_two_threads_stays_bounded) {
  if (!k_recycling)
    GTEST_SKIP() << k_no_recycling;
  constexpr int rounds = 100;
  constexpr int per_round = 500;
  std::vector<block> handoff;
  std::mutex m;
  std::condition_variable cv;
  int produced = 0, consumed = 0;
  std::size_t mapped_after_warmup = 0, mapped_at_end = 0;
  int corrupted = 0;
  std::thread consumer([&] {
    for (int r = 0; r < rounds; ++r) {
      std::vector<block> mine;
      {
        std::unique_lock l(m);
        cv.wait(l, [&] { return produced > r; });
        mine.swap(handoff);
      }
      for (const block& b : mine) {
        corrupted += intact(b) ? 0 : 1;
        release(b);
      }
      std::lock_guard l(m);
      consumed = r + 1;
      cv.notify_all();
    }
  });
  std::uint32_t id = 1;
  for (int r = 0; r < rounds; ++r) {
    std::vector<block> made;
    for (int i = 0; i < per_round; ++i)
      made.push_back(make(200 + (i % 3) * 100, id++));  // three classes, like a connection's frames
    {
      std::unique_lock l(m);
      handoff = std::move(made);
      produced = r + 1;
      cv.notify_all();
      cv.wait(l, [&] { return consumed > r; });
    }
    if (r == 3)  // the consumer's lists are full by now (1,500 frames freed)
      mapped_after_warmup = saturn::task_memory_mapped();
  }
  consumer.join();
  mapped_at_end = saturn::task_memory_mapped();
  EXPECT_EQ(corrupted, 0);
  // Chunks are 256 KiB; the consumer may hold 64 KiB per class.
  EXPECT_LE(mapped_at_end, mapped_after_warmup + 256 * 1024)
      << "mapped frame memory grew from " << mapped_after_warmup << " to " << mapped_at_end << " bytes";
}

TEST(task_frame_allocator, two_hundred_thousand_live_frames) {
  constexpr int n = 200'000;
  std::mt19937 rng(2718);
  for (int round = 0; round < 2; ++round) {  // the second round runs on recycled frames
    std::vector<block> live;
    live.reserve(n);
    for (int i = 0; i < n; ++i)
      live.push_back(make(1 + rng() % 512, static_cast<std::uint32_t>(i + round * n)));
    ASSERT_TRUE(disjoint(live));
    int corrupted = 0;
    for (const block& b : live)
      corrupted += intact(b) ? 0 : 1;
    EXPECT_EQ(corrupted, 0) << "round " << round;
    for (const block& b : live)
      release(b);
  }
}

// Above frame_max_small, frame_allocate is operator new: the allocation shows up in the
// malloc arena's in-use bytes, and a recycled small frame does not. glibc's tcache counts
// its cached blocks as in use, so each size's tcache bin is emptied first (7 blocks by
// default; 16 taken) so that a malloc of that size has to take memory from the arena.
TEST(task_frame_allocator, large_frames_go_to_operator_new) {
#if defined(SATURN_ASAN)
  for (std::size_t n : {std::size_t{1}, std::size_t{512}, std::size_t{513}, std::size_t{600}, std::size_t{4096}}) {
    void* p = frame_allocate(n);
    EXPECT_TRUE(__sanitizer_get_ownership(p)) << n;
    EXPECT_EQ(__sanitizer_get_allocated_size(p), n);
    frame_deallocate(p, n);
  }
  // sanitizer build: every frame, small or large, is operator new's (checked above)
#elif defined(SATURN_TSAN)
  GTEST_SKIP() << k_no_recycling;
#else
  const std::size_t sizes[] = {1, 200, 512, 513, 600, 5000};
  std::vector<void*> drained;
  drained.reserve(256);  // no regrowth below: a freed old buffer would refill a tcache bin
  for (std::size_t n : sizes)
    for (int i = 0; i < 16; ++i)
      drained.push_back(std::malloc(n));
  // warm up the small classes so the next small allocations come from a free list
  for (std::size_t n : {std::size_t{1}, std::size_t{200}, std::size_t{512}})
    frame_deallocate(frame_allocate(n), n);

  for (std::size_t n : sizes) {
    const std::size_t before = mallinfo2().uordblks;
    void* p = frame_allocate(n);
    const std::size_t after = mallinfo2().uordblks;
    if (n <= saturn::detail::frame_max_small)
      EXPECT_EQ(after, before) << "a recycled " << n << "-byte frame touched malloc";
    else
      EXPECT_GE(after - before, n) << "a " << n << "-byte frame did not come from operator new";
    EXPECT_TRUE(aligned(p, n));
    std::memset(p, 0xab, n);
    frame_deallocate(p, n);
  }
  for (void* p : drained)
    std::free(p);
#endif
}

// Frames cached by a thread that exits go to the global pool, where a new thread finds
// them. Checked for a thread that allocated (and so carved a chunk) and for a thread that
// only ever freed frames allocated elsewhere (e.g. the consumer of a producer/consumer pair).
TEST(task_frame_allocator, frames_cached_by_an_exiting_thread_are_reused) {
  if (!k_recycling) {
    GTEST_SKIP() << k_no_recycling;
  }
  constexpr std::size_t size = 500;  // class 31, rarely used by anything else
  constexpr int n = 64;
  auto first_alloc_on_fresh_thread = [] {
    void* p = nullptr;
    std::thread([&] {
      p = frame_allocate(size);
      frame_deallocate(p, size);  // stays cached on this thread and goes back at its exit
    }).join();
    return p;
  };

  // 1. allocated and freed on the same thread, which then exits
  std::set<void*> freed_by_owner;
  std::thread([&] {
    std::vector<void*> ps;
    for (int i = 0; i < n; ++i)
      ps.push_back(frame_allocate(size));
    for (void* p : ps) {
      freed_by_owner.insert(p);
      frame_deallocate(p, size);
    }
  }).join();
  EXPECT_EQ(freed_by_owner.count(first_alloc_on_fresh_thread()), 1u)
      << "frames cached by an exiting thread were not handed to the global pool (the exit flush is registered "
         "only when a thread carves a chunk, not when it refills from the pool)";

  // 2. allocated on one thread, freed on another that never allocates, which then exits
  std::vector<void*> ps;
  std::thread([&] {
    for (int i = 0; i < n; ++i)
      ps.push_back(frame_allocate(size));
  }).join();
  std::set<void*> freed_by_consumer(ps.begin(), ps.end());
  std::thread([&] {
    for (void* p : ps)
      frame_deallocate(p, size);
  }).join();
  EXPECT_EQ(freed_by_consumer.count(first_alloc_on_fresh_thread()), 1u)
      << "frames freed by an exiting thread that never allocated were lost (its cache is not flushed at exit)";

  // 3. a thread that only takes frames from the global pool (one refill: a whole batch
  //    moves to its list), never carves and never frees, then exits: the rest of the
  //    batch must go back to the pool. Another class, so 1. and 2. do not interfere.
  constexpr std::size_t size3 = 480;
  std::set<void*> batch;
  std::thread([&] {
    std::vector<void*> qs;
    for (int i = 0; i < n; ++i)
      qs.push_back(frame_allocate(size3));
    for (void* q : qs) {
      batch.insert(q);
      frame_deallocate(q, size3);
    }
  }).join();  // its list (n frames) is now the pool's newest batch of this class
  void* taken = nullptr;
  std::thread([&] { taken = frame_allocate(size3); }).join();  // refill, take one, exit
  EXPECT_EQ(batch.count(taken), 1u);
  void* next = nullptr;
  std::thread([&] {
    next = frame_allocate(size3);
    frame_deallocate(next, size3);
  }).join();
  EXPECT_EQ(batch.count(next), 1u)
      << "a batch refilled by a thread that exited without freeing or carving was lost with it";
  EXPECT_NE(next, taken);
}

// trim: chunks whose frames are all free (after the thread that carved them exited) go
// back to the kernel; chunks with a live frame stay, and that frame stays intact.
TEST(task_frame_allocator, trim_releases_fully_free_chunks_only) {
#if defined(SATURN_ASAN) || defined(SATURN_TSAN)
  GTEST_SKIP() << "sanitizer builds allocate frames with operator new (nothing to trim)";
#else
  constexpr std::size_t n = 50'000, size = 200;
  void* survivor = nullptr;
  std::thread([&] {
    std::vector<void*> frames;
    for (std::size_t i = 0; i < n; ++i)
      frames.push_back(saturn::detail::frame_allocate(size));
    survivor = frames[n / 2];
    std::memset(survivor, 0x5a, size);
    for (void* p : frames)
      if (p != survivor)
        saturn::detail::frame_deallocate(p, size);
  }).join();  // its lists go to the global pool and its last chunk is retired
  const std::size_t in_use_before = saturn::task_memory_in_use();
  const std::size_t released = saturn::trim_task_memory();
  EXPECT_GE(released, (n - 1) * 208 / 2) << "most of ~10 MB of free frames should go back";
  if constexpr (saturn::config::metrics) {
    // Released chunks held only free frames: the bytes in use (the survivor among them) stay.
    EXPECT_EQ(saturn::task_memory_in_use(), in_use_before);
  }
  auto* bytes = static_cast<unsigned char*>(survivor);
  for (std::size_t i = 0; i < size; ++i)
    ASSERT_EQ(bytes[i], 0x5a) << "a live frame's chunk was released";
  EXPECT_EQ(saturn::trim_task_memory(), 0u) << "a second trim finds nothing more";
  saturn::detail::frame_deallocate(survivor, size);
  // Allocation still works after a trim (lists re-formed, chunks table consistent).
  std::vector<void*> again;
  for (std::size_t i = 0; i < 10'000; ++i)
    again.push_back(saturn::detail::frame_allocate(size));
  for (void* p : again)
    saturn::detail::frame_deallocate(p, size);
#endif
}

// Frames of 104 B (8-byte aligned) and 96 B (16-byte aligned) carved in turn leave 8 B of
// padding before most 96 B frames. The padding is no frame: once every frame is free,
// trim still gives the chunks back.
TEST(task_frame_allocator, trim_releases_chunks_with_alignment_padding) {
#if defined(SATURN_ASAN) || defined(SATURN_TSAN)
  GTEST_SKIP() << "sanitizer builds allocate frames with operator new (nothing to trim)";
#else
  constexpr std::size_t pairs = 40'000;
  int misaligned = 0;
  std::thread([&] {
    std::vector<std::pair<void*, std::size_t>> frames;
    for (std::size_t i = 0; i < pairs; ++i)
      for (std::size_t size : {std::size_t{104}, std::size_t{96}}) {
        void* p = saturn::detail::frame_allocate(size);
        misaligned += aligned(p, size) ? 0 : 1;
        frames.emplace_back(p, size);
      }
    for (auto [p, size] : frames)
      saturn::detail::frame_deallocate(p, size);
  }).join();
  EXPECT_EQ(misaligned, 0);
  const std::size_t released = saturn::trim_task_memory();
  EXPECT_GE(released, pairs * 200 / 2) << "most of ~8 MB of free frames should go back";
#endif
}

// In-use accounting: the bytes of live frames (small ones at their class size, large ones
// at their size), exact on one thread; a frame freed on another thread, or outliving the
// thread that allocated it, still leaves the total where it started once freed.
TEST(task_frame_allocator, in_use_counts_live_frames_exactly) {
  if (!k_recycling)
    GTEST_SKIP() << k_no_recycling;
  using saturn::detail::frame_class;
  using saturn::detail::frame_class_size;
  const auto base = saturn::detail::frame_usage();
  std::mt19937 rng(31);
  std::vector<std::pair<void*, std::size_t>> live;
  std::size_t small = 0, large = 0;
  for (int i = 0; i < 5000; ++i) {
    const std::size_t size = (i % 50 == 0) ? 513 + rng() % 2000 : 1 + rng() % 512;
    live.emplace_back(frame_allocate(size), size);
    if (size > saturn::detail::frame_max_small)
      large += size;
    else
      small += frame_class_size(frame_class(size));
  }
  const auto during = saturn::detail::frame_usage();
  EXPECT_EQ(during.small - base.small, small);
  EXPECT_EQ(during.large - base.large, large);
  EXPECT_EQ(saturn::task_memory_in_use(), during.small);
  EXPECT_LE(during.small, saturn::task_memory_mapped());
  // Free every other one, then the rest: the count follows each free.
  std::size_t freed_small = 0;
  for (std::size_t i = 0; i < live.size(); i += 2) {
    frame_deallocate(live[i].first, live[i].second);
    if (live[i].second <= saturn::detail::frame_max_small)
      freed_small += frame_class_size(frame_class(live[i].second));
  }
  EXPECT_EQ(saturn::detail::frame_usage().small - base.small, small - freed_small);
  for (std::size_t i = 1; i < live.size(); i += 2)
    frame_deallocate(live[i].first, live[i].second);
  const auto after = saturn::detail::frame_usage();
  EXPECT_EQ(after.small, base.small);
  EXPECT_EQ(after.large, base.large);
}

TEST(task_frame_allocator, in_use_across_threads_and_thread_exit) {
  if (!k_recycling)
    GTEST_SKIP() << k_no_recycling;
  const auto base = saturn::detail::frame_usage();
  constexpr int n = 20000;  // more than a list's cap: frees spill to the global pool too
  // Allocated here, freed by a thread that then exits.
  std::vector<void*> mine;
  for (int i = 0; i < n; ++i)
    mine.push_back(frame_allocate(64));
  EXPECT_EQ(saturn::detail::frame_usage().small - base.small, std::size_t(n) * 64);
  std::thread([&] {
    for (void* p : mine)
      frame_deallocate(p, 64);
  }).join();
  EXPECT_EQ(saturn::detail::frame_usage().small, base.small);
  // Allocated by a thread that exits while they are alive (its count is kept), freed here.
  std::vector<void*> theirs;
  std::thread([&] {
    for (int i = 0; i < n; ++i)
      theirs.push_back(frame_allocate(200));
    theirs.push_back(frame_allocate(4000));
  }).join();
  const auto during = saturn::detail::frame_usage();
  EXPECT_EQ(during.small - base.small, std::size_t(n) * 200);
  EXPECT_EQ(during.large - base.large, 4000u);
  frame_deallocate(theirs.back(), 4000);
  theirs.pop_back();
  for (void* p : theirs)
    frame_deallocate(p, 200);
  const auto after = saturn::detail::frame_usage();
  EXPECT_EQ(after.small, base.small);
  EXPECT_EQ(after.large, base.large);
}
