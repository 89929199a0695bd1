/// \file
/// Deterministic simulation (saturn/sim/): a whole saturn program on a simulated kernel
/// with a virtual clock, reproducible from a seed. A testing tool, like saturn/testing/:
/// saturn/saturn.hpp does not include it.
#pragma once

#include <saturn/sim/run.hpp>
#include <saturn/sim/world.hpp>
