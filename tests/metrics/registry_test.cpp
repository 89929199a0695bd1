// registry: names validated, get-or-create, type clashes, labels escaped, counters summed
// over threads (including threads that exited), histograms cumulative.
#include <saturn/metrics.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>
#include <vector>

#include "metrics/exposition.hpp"

namespace m = saturn::metrics;

TEST(MetricsRegistry, NamesAreValidated) {
  m::registry reg;
  EXPECT_THROW(reg.counter("", "x"), std::invalid_argument);
  EXPECT_THROW(reg.counter("1abc", "x"), std::invalid_argument);
  EXPECT_THROW(reg.counter("a-b", "x"), std::invalid_argument);
  EXPECT_THROW(reg.counter("ok_total", "x", {{"bad-label", "v"}}), std::invalid_argument);
  EXPECT_THROW(reg.counter("ok_total", "x", {{"__reserved", "v"}}), std::invalid_argument);
  EXPECT_THROW(reg.counter("ok_total", "x", {{"a", "1"}, {"a", "2"}}), std::invalid_argument);
  EXPECT_THROW(reg.histogram("h", "x", {1, 2}, {{"le", "1"}}), std::invalid_argument);
  EXPECT_THROW(reg.histogram("h", "x", {2, 1}), std::invalid_argument);
  EXPECT_THROW(reg.histogram("h", "x", {}), std::invalid_argument);
  EXPECT_THROW(reg.histogram("h", "x", {1, INFINITY}), std::invalid_argument);
  EXPECT_NO_THROW(reg.counter("ns:sub_total", "colons are allowed"));
  EXPECT_TRUE(m::valid_metric_name("_a:b9"));
  EXPECT_FALSE(m::valid_label_name("a:b"));
}

TEST(MetricsRegistry, SameNameAndLabelsIsTheSameObjectOtherTypeIsAnError) {
  m::registry reg;
  m::counter& a = reg.counter("jobs_total", "Jobs", {{"queue", "a"}});
  m::counter& a2 = reg.counter("jobs_total", "Jobs", {{"queue", "a"}});
  m::counter& b = reg.counter("jobs_total", "Jobs", {{"queue", "b"}});
  EXPECT_EQ(&a, &a2);
  EXPECT_NE(&a, &b);
  try {
    reg.gauge("jobs_total", "Jobs");
    ADD_FAILURE() << "a gauge under a counter's name was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("already registered as a counter"), std::string::npos) << e.what();
  }
  reg.histogram("lat", "x", {1, 2});
  EXPECT_THROW(reg.histogram("lat", "x", {1, 3}, {{"k", "v"}}), std::invalid_argument);
}

TEST(MetricsRegistry, RendersLabelsEscapedAndParsesBack) {
  m::registry reg;
  reg.counter("esc_total", "Help with a \\ backslash\nand a newline", {{"v", "a\"b\\c\nd"}}).inc(3);
  reg.gauge("g", "A gauge", {{"k", "x"}}).set(-2.5);
  reg.gauge("g", "A gauge", {{"k", "y"}}).set(1e300);
  const std::string text = reg.render();
  EXPECT_NE(text.find("esc_total{v=\"a\\\"b\\\\c\\nd\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# HELP esc_total Help with a \\\\ backslash\\nand a newline\n"), std::string::npos) << text;
  auto e = saturn_test::parse_exposition(text);
  auto s = e.find("esc_total");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].label("v"), "a\"b\\c\nd");
  EXPECT_EQ(e.types["esc_total"], "counter");
  EXPECT_EQ(e.sum("g", {{"k", "x"}}), -2.5);
  EXPECT_EQ(e.sum("g", {{"k", "y"}}), 1e300);
}

TEST(MetricsRegistry, CountersSumEveryThreadIncludingExitedOnes) {
  m::registry reg;
  m::counter& c = reg.counter("work_total", "Work");
  constexpr int threads = 8, per = 100000;
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < per; ++i)
        c.inc();
    });
  for (auto& t : ts)
    t.join();  // all exited: their cells were folded into the retired totals
  EXPECT_EQ(c.value(), std::uint64_t(threads) * per);
  c.inc(5);  // and this live thread's own cell
  EXPECT_EQ(c.value(), std::uint64_t(threads) * per + 5);
}

TEST(MetricsRegistry, CounterReadWhileThreadsIncrementIsMonotonic) {
  m::registry reg;
  m::counter& c = reg.counter("live_total", "Live");
  std::atomic<bool> stop{false};
  std::vector<std::thread> ts;
  for (int t = 0; t < 3; ++t)
    ts.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed))
        c.inc();
    });
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (c.value() == 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::yield();
  std::uint64_t last = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t v = c.value();
    ASSERT_GE(v, last);
    last = v;
  }
  stop = true;
  for (auto& t : ts)
    t.join();
  EXPECT_GE(c.value(), last);
  EXPECT_GT(last, 0u) << "no increment was seen while the threads ran";
}

TEST(MetricsRegistry, HistogramBucketsAreCumulativeAndInfEqualsCount) {
  m::registry reg;
  m::histogram& h = reg.histogram("size_bytes", "Sizes", {10, 100, 1000}, {{"kind", "a"}});
  std::thread t([&] {
    for (double v : {1.0, 10.0, 11.0, 5000.0})
      h.observe(v);
  });
  t.join();
  h.observe(100);
  h.observe(NAN);  // counted in +Inf
  auto s = h.snapshot();
  ASSERT_EQ(s.cumulative.size(), 4u);
  EXPECT_EQ(s.cumulative[0], 2u);  // 1, 10 (le is inclusive)
  EXPECT_EQ(s.cumulative[1], 4u);  // + 11, 100
  EXPECT_EQ(s.cumulative[2], 4u);
  EXPECT_EQ(s.cumulative[3], 6u);
  EXPECT_EQ(s.count, 6u);
  auto e = saturn_test::parse_exposition(reg.render());
  EXPECT_EQ(saturn_test::check_histograms(e), 1);
  EXPECT_EQ(e.sum("size_bytes_bucket", {{"le", "+Inf"}, {"kind", "a"}}), 6);
  EXPECT_EQ(e.sum("size_bytes_bucket", {{"le", "10"}}), 2);
  EXPECT_EQ(e.sum("size_bytes_count"), 6);
  EXPECT_TRUE(std::isnan(e.sum("size_bytes_sum")));  // NaN poisons the sum, as in Prometheus clients
}

TEST(MetricsRegistry, CollectorsAddFamiliesUntilTheirHandleGoes) {
  m::registry reg;
  {
    auto h = reg.add_collector([](m::sample_sink& s) {
      s.family("coll_value", "From a collector", m::metric_type::gauge);
      s.sample("coll_value", {{"a", "1"}}, 42.0);
    });
    auto e = saturn_test::parse_exposition(reg.render());
    EXPECT_EQ(e.sum("coll_value"), 42);
  }
  EXPECT_EQ(reg.render().find("coll_value"), std::string::npos);
}
