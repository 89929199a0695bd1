/// \file
/// Kept so that older includes compile: `buf_ring` is part of the loop's implementer
/// interface, saturn/ext/buf_ring.hpp.
#pragma once

#include <saturn/ext/buf_ring.hpp>
