# saturn-walk is timed as a whole process (hyperfine, ~50 ms walks): loading libstdc++,
# libgcc_s, libm and liburing costs about 1 ms per start, so link them statically (only
# libc stays shared). Sanitizer builds keep the default dynamic link.
if(NOT SATURN_SANITIZE)
  find_library(SATURN_URING_STATIC NAMES liburing.a)
  target_link_options(${app} PRIVATE -static-libstdc++ -static-libgcc -Wl,--as-needed)
  if(SATURN_URING_STATIC)
    # Listed after libsaturn.a, before the shared liburing that --as-needed then drops.
    target_link_libraries(${app} PRIVATE ${SATURN_URING_STATIC})
  endif()
endif()
