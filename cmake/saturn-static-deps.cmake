# saturn_deps: the libraries libsaturn links, as shared objects or as Debian's static
# archives, chosen per program by its SATURN_STATIC_DEPS property.
#
# Why programs may link them statically: a server's cold start (fork/exec to its first
# answer) on this VM was 22-33 ms for saturn-arena, and 10-12 ms of it was the dynamic
# loader: libssl, libcrypto, libprotobuf, libstdc++, nghttp2, c-ares and brotli mapped and
# their ~8,500 symbol relocations looked up (11.8 M instructions for `--help`, 80 % in
# do_lookup_x; 2.1 M instructions statically linked). Measured: exec of `--help` 15.0 ms
# shared against 8.3 ms static; cold start to the first gRPC Health SERVING 22.7-27.3 ms
# against 13.8-19.1 ms (bench/results/2026-12-06-static-link/). Go links statically by
# default; a container image of a C++ server commonly does the same.
#
# The cost, said plainly: a program linked this way does not pick up a Debian security
# update of OpenSSL (or the others) until it is rebuilt. SATURN_STATIC_PROGRAMS=OFF links
# them shared. libsaturn itself, the tests and the examples always link them shared; the
# sanitizer builds never link statically (the sanitizers want the shared C++ runtime).
#
# How: libsaturn links saturn_deps PRIVATE; being a static library, that reaches every
# program as $<LINK_ONLY:saturn_deps>, and saturn_deps' generator expression reads the
# property on the program being linked.

set(saturn_shared_deps PkgConfig::URING PkgConfig::ZLIB PkgConfig::BROTLI PkgConfig::CARES PkgConfig::NGHTTP2
                       OpenSSL::SSL OpenSSL::Crypto)
# Link order matters for archives: a library before the ones it uses.
set(saturn_static_names uring nghttp2 cares brotlienc brotlidec brotlicommon ssl crypto z)
set(saturn_static_deps)
set(SATURN_STATIC_DEPS_AVAILABLE ON)
foreach(n ${saturn_static_names})
  find_library(SATURN_ARCHIVE_${n} NAMES lib${n}.a)
  if(SATURN_ARCHIVE_${n})
    list(APPEND saturn_static_deps ${SATURN_ARCHIVE_${n}})
  else()
    set(SATURN_STATIC_DEPS_AVAILABLE OFF)
    message(STATUS "saturn: no lib${n}.a: programs link their dependencies shared")
  endif()
endforeach()

add_library(saturn_deps INTERFACE)
if(SATURN_STATIC_DEPS_AVAILABLE)
  # The include directories and compile definitions still come from the shared targets.
  target_link_libraries(saturn_deps INTERFACE
    "$<IF:$<BOOL:$<TARGET_PROPERTY:SATURN_STATIC_DEPS>>,${saturn_static_deps},${saturn_shared_deps}>")
  target_include_directories(saturn_deps INTERFACE
    $<TARGET_PROPERTY:PkgConfig::URING,INTERFACE_INCLUDE_DIRECTORIES>
    $<TARGET_PROPERTY:PkgConfig::BROTLI,INTERFACE_INCLUDE_DIRECTORIES>
    $<TARGET_PROPERTY:PkgConfig::CARES,INTERFACE_INCLUDE_DIRECTORIES>
    $<TARGET_PROPERTY:PkgConfig::NGHTTP2,INTERFACE_INCLUDE_DIRECTORIES>
    $<TARGET_PROPERTY:OpenSSL::SSL,INTERFACE_INCLUDE_DIRECTORIES>)
else()
  target_link_libraries(saturn_deps INTERFACE ${saturn_shared_deps})
endif()

if(SATURN_SANITIZE OR NOT SATURN_STATIC_DEPS_AVAILABLE)
  set(SATURN_STATIC_PROGRAMS OFF)
endif()

# saturn_link_static(target): link `target` (a program) with its dependencies and the C++
# runtime statically, when SATURN_STATIC_PROGRAMS is on.
function(saturn_link_static target)
  if(SATURN_STATIC_PROGRAMS)
    set_target_properties(${target} PROPERTIES SATURN_STATIC_DEPS ON)
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
  endif()
endfunction()
