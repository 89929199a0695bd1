"""Library behind scripts/bench and scripts/ab (saturn's benchmark runner).

Modules, in dependency order:

  common   paths, logging, machine facts, quiet-machine wait, CPU accounting
  figures  which JSON fields are figures, which direction is better, formatting
  checks   per-suite answer checks (checksums, counts, errors)
  suites   the seven suites of docs/workloads.md: parameters and the steps of a round
  execute  runs one step (a benchmark program, a hyperfine call, an strace call)
  walk     the walk suite's trees, count verification, hyperfine and strace steps
  rpc      the rpc suite's servers, h2load runs, answer checks and cold starts
  stats    summary over rounds: median / min / max, per-round saturn/peer ratios
  report   docs/benchmarks.md sections between <!-- bench:SUITE:begin/end --> markers
  plots    docs/plots/<suite>.svg with matplotlib (also runnable as a script)

Only the Python 3 standard library is used, plus matplotlib for the plots.
"""
