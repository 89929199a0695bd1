/// \file
/// Tier C, composable effects (namespace saturn::effect): the same as
/// saturn/effect/effect.hpp, named like the other module headers.
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/effect/effect.hpp>
