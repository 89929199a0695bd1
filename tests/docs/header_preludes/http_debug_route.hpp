// wrap: function
#include <saturn/http.hpp>
