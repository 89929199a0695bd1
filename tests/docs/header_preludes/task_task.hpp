// wrap: file
#include <saturn/task.hpp>
#include <cstdio>
