// wrap: function
#include <saturn/sync.hpp>
inline int n = 4;
