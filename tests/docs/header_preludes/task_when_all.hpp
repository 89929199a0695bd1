// wrap: task
#include <saturn/task.hpp>
#include <cstddef>
#include <vector>
struct user {};
struct order {};
saturn::task<user> load_user(int id);
saturn::task<std::vector<order>> load_orders(int id);
inline int id = 7;
inline std::vector<saturn::task<std::size_t>> reads;
