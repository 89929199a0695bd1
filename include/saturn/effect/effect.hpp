/// \file
/// Tier C: composable effects (lazy pipelines folded at compile time). See core.hpp for
/// the protocol and docs/architecture.md ("Tier C") for how it runs.
///
/// ```
/// namespace fx = saturn::effect;
/// auto e = fx::nop() | fx::then([] { return 1; }) | fx::with_timeout(100ms) | fx::retry({.max_attempts = 3});
/// fx::start(std::move(e), loop, [](fx::outcome<int> o) { /* ... */ });   // tier A
/// saturn::result<int> r = co_await std::move(e);                    // tier B
/// ```
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/effect/core.hpp>
#include <saturn/effect/from_task.hpp>
#include <saturn/effect/leaf.hpp>
#include <saturn/effect/let_value.hpp>
#include <saturn/effect/outcome.hpp>
#include <saturn/effect/retry.hpp>
#include <saturn/effect/run.hpp>
#include <saturn/effect/when.hpp>
