// wrap: task
#include <saturn/fs.hpp>
#include <fcntl.h>
#include <string>
namespace fs = saturn::fs;
void log(const std::string& text);
