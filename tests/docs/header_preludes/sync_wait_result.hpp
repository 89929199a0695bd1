// wrap: task
#include <saturn/sync.hpp>
#include <string>
using saturn::result;
extern saturn::event ev;
void log(const std::string& text);
