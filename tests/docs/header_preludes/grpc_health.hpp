// wrap: function
#include <saturn/grpc.hpp>
