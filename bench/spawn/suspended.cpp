// suspended_100k: placeholder until saturn::event lands (see sync/).
#include "scenarios.hpp"

namespace spawn_bench {
void suspended_100k(const bench::args&, const char*) {}
int suspended_child(const bench::args&) { return 0; }
}  // namespace spawn_bench
