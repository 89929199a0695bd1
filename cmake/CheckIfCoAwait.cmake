# Warns at configure time when the C++ compiler miscompiles `if (co_await …)` in a
# coroutine body that declares no local variable (g++ 12.2, Debian 12's: resuming such a
# coroutine runs nothing of its body, silently). saturn's own code does not use the
# pattern; code written against saturn may. Sets SATURN_IF_CO_AWAIT_BROKEN.
try_run(saturn_if_co_await_run saturn_if_co_await_compiled
        ${CMAKE_BINARY_DIR}/probes/if_co_await
        ${CMAKE_CURRENT_LIST_DIR}/probes/if_co_await.cpp
        CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
        COMPILE_OUTPUT_VARIABLE saturn_if_co_await_log)
if(NOT saturn_if_co_await_compiled)
  message(WARNING "saturn: the `if (co_await ...)` probe did not compile; skipped:\n${saturn_if_co_await_log}")
  set(SATURN_IF_CO_AWAIT_BROKEN OFF)
elseif(NOT saturn_if_co_await_run EQUAL 0)
  set(SATURN_IF_CO_AWAIT_BROKEN ON)
  message(WARNING
    "saturn: ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} miscompiles a coroutine whose body declares "
    "no local variable and has co_await in the condition of an if, while, do, for or switch: resuming it runs "
    "nothing of the body. "
    "In such a body name the result first (`auto r = co_await x; if (r) ...`, or "
    "`if (auto r = co_await x; r) ...`), or build with clang (the clang-release preset). "
    "See README.md, \"Known compiler issues\".")
else()
  set(SATURN_IF_CO_AWAIT_BROKEN OFF)
endif()
