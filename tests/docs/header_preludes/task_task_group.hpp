// wrap: task
#include <saturn/task.hpp>
#include <vector>
saturn::task<> serve(int fd);
inline std::vector<int> clients;
