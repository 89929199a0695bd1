// wrap: task
#include <saturn/sync.hpp>
