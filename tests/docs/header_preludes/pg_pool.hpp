// wrap: task
#include <saturn/pg.hpp>
#include <cstdio>
#include <string>
namespace pg = saturn::pg;
extern saturn::pg::connection conn;
extern std::string url;
