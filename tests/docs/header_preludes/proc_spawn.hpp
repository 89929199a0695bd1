// wrap: task
#include <saturn/proc.hpp>
#include <saturn/sched.hpp>
// A process body taking zero, one or two ints.
struct body_fn {
  saturn::process<int> operator()(int a = 0, int b = 0) const;
};
inline constexpr body_fn body{};
inline int arg1 = 1, arg2 = 2;
extern saturn::thread_pool pool;
