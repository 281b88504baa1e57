# The layers of controller/ (cmake/layers.cmake): a file of controller/<folder>/
# may include its own folder, include/ (edgeshed/abi.h), the folders its
# layer lists and the standard and system headers. law/ may in addition
# include no I/O header and must not read a clock itself (it is handed a
# law::Clock; issue #18). Run at build time before any folder compiles, and
# by the ctest case unit.layering on trees made to break the rule:
#
#   cmake -DROOT=<source tree> [-DSTAMP=<file touched on success>] \
#         -P cmake/check_layering.cmake
#
# Fails naming each file and the include that breaks the rule. The build
# enforces the same table a second way (each folder's library sees only its
# own folder and those it links); this check also names relative paths
# and headers a folder's libraries would happen to find.
cmake_minimum_required(VERSION 3.25)

if(NOT ROOT)
  message(FATAL_ERROR "check_layering: pass -DROOT=<source tree>")
endif()
get_filename_component(ROOT "${ROOT}" REALPATH)
# The table is the tree's own, so a copy of the tree is checked by its rules.
include("${ROOT}/cmake/layers.cmake")
set(controller "${ROOT}/controller")
# Where a quoted include is looked for, after the including file's own folder.
set(include_roots "${controller}" "${ROOT}/include")
# Headers that do I/O (files, terminals, sockets, the clock, the log). <ostream>
# stays allowed: law/types.h writes its names to a stream the caller gives.
set(io_header_regex
    "^(iostream|fstream|cstdio|stdio\\.h|filesystem|ctime|time\\.h|unistd\\.h|fcntl\\.h|poll\\.h|sys/.*|netinet/.*|arpa/.*|netdb\\.h|bpf/.*|spdlog/.*|fmt/.*|httplib\\.h|systemd/.*)$")
set(clock_read_regex "(steady_clock|system_clock|high_resolution_clock)::now")

# The folder of controller/ that path lies in ("main" for controller/ itself),
# or "" outside controller/.
function(folder_of path out)
  set(${out} "" PARENT_SCOPE)
  file(RELATIVE_PATH rel "${controller}" "${path}")
  if(rel MATCHES "^\\.\\./")
    return()
  endif()
  if(rel MATCHES "^([^/]+)/")
    set(${out} "${CMAKE_MATCH_1}" PARENT_SCOPE)
  else()
    set(${out} main PARENT_SCOPE)
  endif()
endfunction()

# "common/, law/ and include/" for the folder's allowed list.
function(allowed_text layer out)
  set(names "")
  foreach(dir ${layer} ${EDGESHED_LAYER_${layer}})
    if(NOT dir STREQUAL "main")
      list(APPEND names "${dir}/")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES names)
  list(APPEND names "include/")
  list(JOIN names ", " text)
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

set(errors "")
set(checked 0)
foreach(layer ${EDGESHED_LAYERS} main)
  if(layer STREQUAL "main")
    file(GLOB files "${controller}/*.h" "${controller}/*.cpp")
  else()
    if(NOT IS_DIRECTORY "${controller}/${layer}")
      string(APPEND errors "controller/${layer}/: a layer of cmake/layers.cmake, but no folder\n")
      continue()
    endif()
    file(GLOB_RECURSE files "${controller}/${layer}/*.h" "${controller}/${layer}/*.cpp")
  endif()
  allowed_text(${layer} allowed)
  set(may ${layer} ${EDGESHED_LAYER_${layer}})
  set(pure FALSE)
  if(layer IN_LIST EDGESHED_PURE_LAYERS)
    set(pure TRUE)
  endif()
  foreach(file ${files})
    math(EXPR checked "${checked} + 1")
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
        folder_of("${resolved}" target)
        if(target AND NOT target IN_LIST may)
          file(RELATIVE_PATH where "${ROOT}" "${resolved}")
          string(APPEND errors
                 "${shown}: '${line}' is ${where}, outside ${allowed} (cmake/layers.cmake)\n")
        elseif(NOT target)
          string(FIND "${resolved}" "${ROOT}/include/" at)
          if(NOT at EQUAL 0)
            file(RELATIVE_PATH where "${ROOT}" "${resolved}")
            string(APPEND errors "${shown}: '${line}' is ${where}, outside controller/ and include/\n")
          endif()
        endif()
      elseif(quoted)
        set(generated "${EDGESHED_LAYER_GENERATED_${layer}}")
        if(NOT generated OR NOT name MATCHES "${generated}")
          string(APPEND errors
                 "${shown}: '${line}' is in none of ${allowed} (generated, or of another part)\n")
        endif()
      elseif(pure AND name MATCHES "${io_header_regex}")
        string(APPEND errors "${shown}: '${line}' is an I/O header; ${layer}/ does no I/O\n")
      endif()
    endforeach()
    if(pure)
      file(STRINGS "${file}" clock_reads REGEX "${clock_read_regex}")
      if(clock_reads)
        string(APPEND errors
               "${shown}: reads a clock itself; ${layer}/ takes the time from its law::Clock\n")
      endif()
    endif()
  endforeach()
endforeach()

# A folder of controller/ that no layer names would build into nothing.
file(GLOB entries LIST_DIRECTORIES true "${controller}/*")
foreach(entry ${entries})
  get_filename_component(name "${entry}" NAME)
  if(IS_DIRECTORY "${entry}" AND NOT name IN_LIST EDGESHED_LAYERS)
    string(APPEND errors "controller/${name}/: a folder that cmake/layers.cmake does not list\n")
  endif()
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "check_layering: no file in ${controller}")
endif()

if(errors)
  message(FATAL_ERROR "controller/ breaks its layering (cmake/layers.cmake):\n${errors}")
endif()
if(STAMP)
  file(TOUCH "${STAMP}")
endif()
