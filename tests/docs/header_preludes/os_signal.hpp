// wrap: file
#include <saturn/os.hpp>
#include <saturn/saturn.hpp>
#include <signal.h>
