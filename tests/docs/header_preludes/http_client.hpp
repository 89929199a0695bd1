// wrap: task
#include <saturn/http/client.hpp>
#include <saturn/saturn.hpp>
#include <string>
#include <vector>
