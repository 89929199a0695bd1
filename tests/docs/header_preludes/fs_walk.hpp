// wrap: task
#include <saturn/fs.hpp>
#include <atomic>
#include <cstdint>
#include <string>
namespace fs = saturn::fs;
void log(const std::string& text);
