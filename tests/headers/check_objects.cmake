# ctest side of the header check: the object library saturn_header_check was built, one
# object per public header. Run as cmake -DOBJECTS=<list> -DEXPECTED=<n> -P this file.
list(LENGTH OBJECTS count)
if(NOT count EQUAL EXPECTED)
  message(FATAL_ERROR "headers: ${count} objects for ${EXPECTED} public headers (re-run cmake?)")
endif()
set(missing "")
foreach(object ${OBJECTS})
  if(NOT EXISTS "${object}")
    list(APPEND missing "${object}")
  endif()
endforeach()
if(missing)
  list(LENGTH missing n)
  string(REPLACE ";" "\n  " missing "${missing}")
  message(FATAL_ERROR "headers: ${n} of ${count} headers were not compiled alone "
                      "(build the saturn_header_check target):\n  ${missing}")
endif()
message(STATUS "headers: all ${count} public headers compile on their own")
