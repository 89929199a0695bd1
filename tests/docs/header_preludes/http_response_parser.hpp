// wrap: function
#include <saturn/http/response_parser.hpp>
#include <string>
