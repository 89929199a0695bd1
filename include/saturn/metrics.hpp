/// \file
/// saturn's metrics: counters, gauges and histograms with labels (registry.hpp), and the
/// Prometheus text exposition of them and of the runtime's own statistics (render.hpp).
#pragma once

#include <saturn/detail/compiler_check.hpp>

#include <saturn/metrics/counter.hpp>
#include <saturn/metrics/debug_dump.hpp>
#include <saturn/metrics/gauge.hpp>
#include <saturn/metrics/histogram.hpp>
#include <saturn/metrics/registry.hpp>
#include <saturn/metrics/render.hpp>
