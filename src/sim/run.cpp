// sim::run and sim::explore (include/saturn/sim/run.hpp).
#include <saturn/sim/run.hpp>

#include <exception>

namespace saturn::sim {

runtime_options default_runtime_options() {
  runtime_options o;
  o.loop.recv_buffer_count = 64;
  o.loop.recv_buffer_max = 1024;
  o.loop.recv_buffer_size = 4096;
  return o;
}

outcome run(std::uint64_t seed, const options& opts, const program& prog, const runtime_options& ropts) {
  outcome out;
  out.seed = seed;
  world w(seed, opts);
  try {
    runtime rt(ropts);
    try {
      rt.block_on(prog(w));
      out.ok = true;
    } catch (const std::exception& e) {
      out.failure = e.what();
    }
  } catch (const std::exception& e) {
    // The runtime's own teardown failed (it drains every operation under the simulation).
    if (out.failure.empty())
      out.failure = e.what();
    out.ok = false;
  }
  out.trace_hash = w.trace_hash();
  out.completions = w.completions();
  out.virtual_time = w.elapsed();
  return out;
}

std::optional<outcome> explore(std::uint64_t first_seed, std::uint64_t count, const options& opts,
                               const program& prog, const runtime_options& ropts) {
  for (std::uint64_t i = 0; i < count; ++i) {
    outcome o = run(first_seed + i, opts, prog, ropts);
    if (!o.ok)
      return o;
  }
  return std::nullopt;
}

}  // namespace saturn::sim
