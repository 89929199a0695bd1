// wrap: task
#include <saturn/os.hpp>
#include <saturn/task.hpp>
using saturn::os::stdio;
