// wrap: function
#include <saturn/task.hpp>
saturn::task<int> compute();
