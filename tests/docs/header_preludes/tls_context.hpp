// wrap: function
#include <saturn/tls.hpp>
#include <cstdio>
