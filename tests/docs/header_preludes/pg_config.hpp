// wrap: function
#include <saturn/pg.hpp>
