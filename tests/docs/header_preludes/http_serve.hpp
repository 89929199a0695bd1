// wrap: function
#include <saturn/http.hpp>
#include <saturn/sched.hpp>
#include <cstdio>
#include <vector>
