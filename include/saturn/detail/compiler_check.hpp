/// \file
/// A compile-time warning for compilers that miscompile coroutine code written against
/// saturn. Every module header includes it; it declares nothing.
///
/// g++ 12 (12.2 checked; other 12.x releases are assumed to share the bugs) has two:
///   1. `if (co_await x)` — likewise a co_await in a while, do, for or switch condition —
///      in a coroutine whose body declares no local variable: resuming the coroutine runs
///      nothing of its body (it hangs, or returns without having run).
///   2. An aggregate built in a co_await operand (`co_await f(S{str})`, `co_await
///      aw{...}`, or a lambda with by-copy captures `co_await g([s] {...})`) is destroyed
///      twice: a double free.
/// Workarounds: name the result first (`auto r = co_await x; if (r) ...`); build the
/// aggregate or lambda as a named local and pass that. README.md, "Known compiler issues",
/// has examples. saturn's own code avoids both forms.
///
/// Define SATURN_NO_COMPILER_WARNING (-DSATURN_NO_COMPILER_WARNING) to silence it once
/// your code avoids them too (or pass -Wno-cpp). Under -Werror the warning is an error.
/// It is a #warning, not `#pragma GCC warning`: g++ drops the pragma in a header found
/// through -isystem, which is how CMake passes an imported target's include directory.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12 && !defined(SATURN_NO_COMPILER_WARNING)
#warning "saturn: g++ 12 miscompiles two coroutine forms: `if (co_await x)` (or a co_await in a while/do/for/switch condition) in a coroutine body with no local variable hangs, and an aggregate or capturing lambda built in a co_await operand (`co_await f(S{str})`) is destroyed twice. Name the result and the operand first (`auto r = co_await x; if (r) ...`; `S s{str}; co_await f(s);`), or use clang. See saturn's README.md, \"Known compiler issues\". Define SATURN_NO_COMPILER_WARNING to silence this."
#endif
