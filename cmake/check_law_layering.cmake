# The control law is a library of its own with no I/O (issue #18): a file of
# controller/law/ may include only law/, common/ and include/ (edgeshed/abi.h),
# the standard library but its I/O headers, and must not read a clock itself
# (it is handed a law::Clock). Run at build time before edgeshed_law compiles,
# and by the ctest case unit.law_layering on trees made to break the rule:
#
#   cmake -DROOT=<source tree> [-DSTAMP=<file touched on success>] \
#         -P cmake/check_law_layering.cmake
#
# Fails naming each file and the include that breaks the rule.
cmake_minimum_required(VERSION 3.25)

if(NOT ROOT)
  message(FATAL_ERROR "check_law_layering: pass -DROOT=<source tree>")
endif()
get_filename_component(ROOT "${ROOT}" REALPATH)
set(controller "${ROOT}/controller")
# Where a quoted include is looked for, after the including file's own folder,
# in the order the compiler's -I options give.
set(include_roots "${controller}" "${ROOT}/include")
# What law/ may include of the tree.
set(allowed_dirs "${controller}/law" "${controller}/common" "${ROOT}/include")
# Headers that do I/O (files, terminals, sockets, the clock, the log). <ostream>
# stays allowed: law/types.h writes its names to a stream the caller gives.
set(io_header_regex
    "^(iostream|fstream|cstdio|stdio\\.h|filesystem|ctime|time\\.h|unistd\\.h|fcntl\\.h|poll\\.h|sys/.*|netinet/.*|arpa/.*|netdb\\.h|bpf/.*|spdlog/.*|fmt/.*|httplib\\.h|systemd/.*)$")
set(clock_read_regex "(steady_clock|system_clock|high_resolution_clock)::now")

file(GLOB_RECURSE files "${controller}/law/*.h" "${controller}/law/*.cpp")
if(NOT files)
  message(FATAL_ERROR "check_law_layering: no file in ${controller}/law")
endif()

# Whether path lies in one of allowed_dirs.
function(is_allowed path out)
  set(${out} FALSE PARENT_SCOPE)
  foreach(dir ${allowed_dirs})
    string(FIND "${path}" "${dir}/" at)
    if(at EQUAL 0)
      set(${out} TRUE PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

set(errors "")
foreach(file ${files})
  file(RELATIVE_PATH shown "${ROOT}" "${file}")
  get_filename_component(file_dir "${file}" DIRECTORY)
  file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include")
  foreach(line ${includes})
    string(STRIP "${line}" line)
    if(line MATCHES "^#[ \t]*include[ \t]*\"([^\"]+)\"")
      set(name "${CMAKE_MATCH_1}")
      set(quoted TRUE)
    elseif(line MATCHES "^#[ \t]*include[ \t]*<([^>]+)>")
      set(name "${CMAKE_MATCH_1}")
      set(quoted FALSE)
    else()
      string(APPEND errors "${shown}: '${line}' names no header this check can follow\n")
      continue()
    endif()
    # The file the compiler would open: the including folder first for a
    # quoted include, then the include roots.
    set(resolved "")
    set(candidates "")
    if(quoted)
      list(APPEND candidates "${file_dir}/${name}")
    endif()
    foreach(dir ${include_roots})
      list(APPEND candidates "${dir}/${name}")
    endforeach()
    foreach(candidate ${candidates})
      if(EXISTS "${candidate}" AND NOT IS_DIRECTORY "${candidate}")
        get_filename_component(resolved "${candidate}" REALPATH)
        break()
      endif()
    endforeach()
    if(resolved)
      is_allowed("${resolved}" ok)
      if(NOT ok)
        file(RELATIVE_PATH where "${ROOT}" "${resolved}")
        string(APPEND errors "${shown}: '${line}' is ${where}, outside law/, common/ and include/\n")
      endif()
    elseif(quoted)
      string(APPEND errors
             "${shown}: '${line}' is in none of law/, common/ and include/ (generated, or of another part)\n")
    elseif(name MATCHES "${io_header_regex}")
      string(APPEND errors "${shown}: '${line}' is an I/O header; law/ does no I/O\n")
    endif()
  endforeach()
  file(STRINGS "${file}" clock_reads REGEX "${clock_read_regex}")
  if(clock_reads)
    string(APPEND errors "${shown}: reads a clock itself; law/ takes the time from its law::Clock\n")
  endif()
endforeach()

if(errors)
  message(FATAL_ERROR "law/ breaks its layering (cmake/check_law_layering.cmake):\n${errors}")
endif()
if(STAMP)
  file(TOUCH "${STAMP}")
endif()
