// wrap: function
#include <saturn/metrics.hpp>
#include <saturn/http/metrics_route.hpp>
#include <string>
