# Probes the C++ compiler for two coroutine miscompilations that code written against
# saturn can hit, and warns at configure time when it has them. saturn's own build
# includes this file, and so does the installed saturn-config.cmake, so a consumer is
# told about *its* compiler (which may differ from the one saturn was built with).
#
#   1. if_co_await (g++ 12.2): a coroutine whose body declares no local variable and has
#      co_await in the condition of an if, while, do, for or switch: resuming it runs
#      nothing of the body (a hang, or a task that ends without having run).
#   2. co_await_temporary (g++ 12.2): an aggregate built in a co_await operand
#      (`co_await take(counted{str})`), or a lambda with by-copy captures, is destroyed
#      twice (a double free).
#
# Sets SATURN_IF_CO_AWAIT_BROKEN and SATURN_CO_AWAIT_TEMPORARY_BROKEN (ON/OFF) and
# SATURN_CO_AWAIT_BUGS (a list of the names above; empty when neither). Setting
# SATURN_NO_COMPILER_WARNING silences the warnings. The probes run once per compiler and
# are cached; a cross build, which cannot run them, goes by the compiler version.
get_property(_saturn_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
if(NOT "CXX" IN_LIST _saturn_languages)
  return()  # no C++ compiler to ask (a project that enabled only other languages)
endif()

set(_saturn_probed_for "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} ${CMAKE_CXX_COMPILER}")
if(NOT "${SATURN_CO_AWAIT_PROBED_FOR}" STREQUAL "${_saturn_probed_for}")
  set(_saturn_bugs "")
  if(CMAKE_CROSSCOMPILING AND NOT CMAKE_CROSSCOMPILING_EMULATOR)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
       AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      set(_saturn_bugs if_co_await co_await_temporary)
    endif()
  else()
    foreach(_saturn_probe if_co_await co_await_temporary)
      try_run(_saturn_probe_run _saturn_probe_compiled
              ${CMAKE_BINARY_DIR}/saturn-probes/${_saturn_probe}
              ${CMAKE_CURRENT_LIST_DIR}/probes/${_saturn_probe}.cpp
              CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
              COMPILE_OUTPUT_VARIABLE _saturn_probe_log)
      if(NOT _saturn_probe_compiled)
        message(WARNING "saturn: the ${_saturn_probe} coroutine probe did not compile; skipped:\n"
                        "${_saturn_probe_log}")
      elseif(NOT _saturn_probe_run EQUAL 0)
        list(APPEND _saturn_bugs ${_saturn_probe})
      endif()
      unset(_saturn_probe_run CACHE)
      unset(_saturn_probe_compiled CACHE)
    endforeach()
  endif()
  set(SATURN_CO_AWAIT_BUGS "${_saturn_bugs}" CACHE INTERNAL "coroutine miscompilations of the C++ compiler")
  set(SATURN_CO_AWAIT_PROBED_FOR "${_saturn_probed_for}" CACHE INTERNAL "the compiler SATURN_CO_AWAIT_BUGS is for")
endif()

set(SATURN_IF_CO_AWAIT_BROKEN OFF)
set(SATURN_CO_AWAIT_TEMPORARY_BROKEN OFF)
if("if_co_await" IN_LIST SATURN_CO_AWAIT_BUGS)
  set(SATURN_IF_CO_AWAIT_BROKEN ON)
  if(NOT SATURN_NO_COMPILER_WARNING)
    message(WARNING
      "saturn: ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} miscompiles a coroutine whose body "
      "declares no local variable and has co_await in the condition of an if, while, do, for or switch: "
      "resuming it runs nothing of the body (it hangs). "
      "Name the result first (`auto r = co_await x; if (r) ...`, or `if (auto r = co_await x; r) ...`), "
      "or build with clang. See saturn's README.md, \"Known compiler issues\". "
      "-DSATURN_NO_COMPILER_WARNING=ON silences this.")
  endif()
endif()
if("co_await_temporary" IN_LIST SATURN_CO_AWAIT_BUGS)
  set(SATURN_CO_AWAIT_TEMPORARY_BROKEN ON)
  if(NOT SATURN_NO_COMPILER_WARNING)
    message(WARNING
      "saturn: ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} destroys an aggregate built in a "
      "co_await operand twice (`co_await take(counted{str})`, `co_await awaiter{...}`, or a lambda with "
      "by-copy captures `co_await run([s] {...})`): a double free. "
      "Build it as a named local first (`counted c{str}; co_await take(std::move(c));`), or build with "
      "clang. See saturn's README.md, \"Known compiler issues\". "
      "-DSATURN_NO_COMPILER_WARNING=ON silences this.")
  endif()
endif()
unset(_saturn_languages)
unset(_saturn_probed_for)
unset(_saturn_bugs)
