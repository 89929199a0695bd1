// wrap: task
#include <saturn/task.hpp>
#include <string>
saturn::task<int> fetch(std::string url);
saturn::task<> per_core();
inline std::string url = "http://127.0.0.1/";
