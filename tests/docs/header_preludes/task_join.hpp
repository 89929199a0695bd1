// wrap: file
#include <saturn/task/join.hpp>
#include <cstdint>
