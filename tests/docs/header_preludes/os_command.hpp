// wrap: task
#include <saturn/os.hpp>
#include <saturn/task.hpp>
#include <string>
void print(const std::string& text);
