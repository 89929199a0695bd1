// wrap: function
#include <saturn/http/server.hpp>
