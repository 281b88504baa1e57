# ctest unit.layering: cmake/check_layering.cmake passes on the tree and
# fails, naming the file and the include, on copies of controller/ that break
# the layers of cmake/layers.cmake. The cases share one copy of controller/,
# include/ and cmake/layers.cmake under WORK_DIR, with a header
# layering_target.h in each folder for the includes to find; each case writes
# one file with its lines, and takes it away after.
#
#   cmake -DSOURCE_DIR=<repository> -DWORK_DIR=<scratch folder> \
#         -P tests/layering/layering_test.cmake
cmake_minimum_required(VERSION 3.25)

if(NOT SOURCE_DIR OR NOT WORK_DIR)
  message(FATAL_ERROR "pass -DSOURCE_DIR=<repository> -DWORK_DIR=<scratch folder>")
endif()
set(checker "${SOURCE_DIR}/cmake/check_layering.cmake")
include("${SOURCE_DIR}/cmake/layers.cmake")
set(failures "")

# Runs the checker on root; sets rc and out in the caller.
function(check root)
  execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${root} -P ${checker}
                  RESULT_VARIABLE code OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  set(rc "${code}" PARENT_SCOPE)
  set(out "${stdout}${stderr}" PARENT_SCOPE)
endfunction()

function(make_tree root)
  file(REMOVE_RECURSE "${root}")
  file(MAKE_DIRECTORY "${root}/cmake")
  file(COPY "${SOURCE_DIR}/controller" "${SOURCE_DIR}/include" DESTINATION "${root}")
  file(COPY "${SOURCE_DIR}/cmake/layers.cmake" DESTINATION "${root}/cmake")
  foreach(layer ${EDGESHED_LAYERS})
    file(WRITE "${root}/controller/${layer}/layering_target.h" "#pragma once\n")
  endforeach()
  file(WRITE "${root}/tests/common/fake_clock.h" "#pragma once\n")
endfunction()

# Precondition: the tree itself passes.
check("${SOURCE_DIR}")
if(NOT rc EQUAL 0)
  string(APPEND failures "the tree's own controller/ fails the check:\n${out}\n")
endif()

# Each case: name | file written under controller/ | its lines | text the
# failure must show (empty: the lines are allowed and the check must pass).
set(t layering_target.h)
set(cases
    "cli includes daemon|cli/case.cpp|#include \"daemon/${t}\"|controller/cli/case.cpp: '#include \"daemon/${t}\"' is controller/daemon/${t}, outside cli/, common/, law/, config/, dataplane/, ipc/, include/"
    "dataplane includes signals|dataplane/case.h|#include \"signals/${t}\"|controller/dataplane/case.h: '#include \"signals/${t}\"' is controller/signals/${t}, outside dataplane/, common/, include/"
    "signals includes dataplane|signals/case.cpp|#include \"dataplane/${t}\"|controller/signals/case.cpp: '#include \"dataplane/${t}\"' is controller/dataplane/${t}, outside"
    "a subfolder is its folder's|signals/parse/case.cpp|#include \"dataplane/${t}\"|controller/signals/parse/case.cpp: '#include \"dataplane/${t}\"' is controller/dataplane/${t}, outside"
    "common includes config|common/case.h|#include \"config/${t}\"|controller/common/case.h: '#include \"config/${t}\"' is controller/config/${t}, outside common/, include/"
    "ipc includes daemon, relative path|ipc/case.cpp|#include \"../daemon/${t}\"|controller/ipc/case.cpp: '#include \"../daemon/${t}\"' is controller/daemon/${t}, outside ipc/"
    "config includes ipc, angle brackets|config/case.cpp|#include <ipc/${t}>|controller/config/case.cpp: '#include <ipc/${t}>' is controller/ipc/${t}, outside config/"
    "out of controller/|cli/case.cpp|#include \"../../tests/common/fake_clock.h\"|controller/cli/case.cpp: '#include \"../../tests/common/fake_clock.h\"' is tests/common/fake_clock.h, outside controller/ and include/"
    "law includes signals|law/case.h|#include \"signals/${t}\"|controller/law/case.h: '#include \"signals/${t}\"' is controller/signals/${t}, outside law/, common/, include/"
    "law includes a generated header|law/case.cpp|#include \"edgeshed.skel.h\"|controller/law/case.cpp: '#include \"edgeshed.skel.h\"' is in none of law/, common/, include/"
    "cli includes a generated header|cli/case.cpp|#include \"edgeshed.skel.h\"|controller/cli/case.cpp: '#include \"edgeshed.skel.h\"' is in none of"
    "law: file I/O|law/case.cpp|#include <fstream>|controller/law/case.cpp: '#include <fstream>' is an I/O header"
    "law: logging|law/case.cpp|#include <spdlog/spdlog.h>|controller/law/case.cpp: '#include <spdlog/spdlog.h>' is an I/O header"
    "law: reading the clock|law/case.cpp|auto t = std::chrono::steady_clock::now()|controller/law/case.cpp: reads a clock itself"
    "a folder of no layer|extra/case.cpp|#include \"common/${t}\"|controller/extra/: a folder that cmake/layers.cmake does not list"
    "law: law, common and include|law/case.cpp|#include \"common/${t}\"\n#include \"edgeshed/abi.h\"\n#include \"${t}\"\n#include <vector>|"
    "dataplane: its skeletons and I/O|dataplane/case.cpp|#include \"edgeshed.skel.h\"\n#include <fstream>\n#include \"common/${t}\"|"
    "cli: ipc, dataplane and below|cli/case.cpp|#include \"ipc/${t}\"\n#include \"dataplane/${t}\"\n#include \"config/${t}\"\n#include \"law/${t}\"\n#include <common/${t}>|"
    "daemon: every layer below|daemon/case.cpp|#include \"cli/../daemon/${t}\"\n#include \"signals/${t}\"\n#include \"dataplane/${t}\"\n#include \"ipc/${t}\"\n#include \"config/${t}\"|"
    "main: cli and daemon|main_case.cpp|#include \"cli/${t}\"\n#include \"daemon/${t}\"|")
set(root "${WORK_DIR}/tree")
make_tree("${root}")
set(index 0)
foreach(case IN LISTS cases)
  string(REPLACE "|" ";" fields "${case}")
  list(GET fields 0 name)
  list(GET fields 1 file)
  list(GET fields 2 line)
  list(LENGTH fields n)
  set(expect "")
  if(n GREATER 3)
    list(GET fields 3 expect)
  endif()
  string(REPLACE "\\n" "\n" line "${line}")
  math(EXPR index "${index} + 1")
  get_filename_component(dir "${root}/controller/${file}" DIRECTORY)
  set(new_dir FALSE)
  if(NOT IS_DIRECTORY "${dir}")
    set(new_dir TRUE)
  endif()
  file(WRITE "${root}/controller/${file}" "${line}\n")
  check("${root}")
  file(REMOVE "${root}/controller/${file}")
  if(new_dir)
    file(REMOVE_RECURSE "${dir}")
  endif()
  string(REGEX REPLACE "[ \n]+" " " flat "${out}")
  if(expect STREQUAL "")
    if(NOT rc EQUAL 0)
      string(APPEND failures "${name}: allowed, but the check failed:\n${out}\n")
    endif()
  elseif(rc EQUAL 0)
    string(APPEND failures "${name}: the check passed controller/${file} with '${line}'\n")
  else()
    string(FIND "${flat}" "${expect}" at)
    if(at EQUAL -1)
      string(APPEND failures "${name}: the failure does not say \"${expect}\":\n${out}\n")
    endif()
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")

if(failures)
  message(FATAL_ERROR "${failures}")
endif()
message(STATUS "layering check: the tree passes, ${index} cases behave")
