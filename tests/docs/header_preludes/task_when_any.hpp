// wrap: task
#include <saturn/task.hpp>
#include <chrono>
#include <string>
#include <vector>
using namespace std::chrono_literals;
saturn::task<std::string> read_reply(int fd);
saturn::task<> give_up_after(std::chrono::milliseconds d);
void use(const std::string&);
inline int fd = 3;
inline std::vector<saturn::task<std::string>> mirrors;
