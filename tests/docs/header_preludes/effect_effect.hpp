// wrap: task
#include <saturn/effect.hpp>
#include <saturn/loop.hpp>
#include <chrono>
using namespace std::chrono_literals;
extern saturn::event_loop& loop;
