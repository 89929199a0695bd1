// wrap: task
#include <saturn/pg.hpp>
#include <cstdio>
#include <string>
namespace pg = saturn::pg;
extern std::string url;
