# ctest unit.law_layering: cmake/check_law_layering.cmake passes on the tree
# and fails, naming the file and the include, on copies of law/ that break
# the rule. Each case is a fresh copy of controller/law, controller/common and
# include under WORK_DIR, with one line added to one file.
#
#   cmake -DSOURCE_DIR=<repository> -DWORK_DIR=<scratch folder> \
#         -P tests/layering/law_layering_test.cmake
cmake_minimum_required(VERSION 3.25)

if(NOT SOURCE_DIR OR NOT WORK_DIR)
  message(FATAL_ERROR "pass -DSOURCE_DIR=<repository> -DWORK_DIR=<scratch folder>")
endif()
set(checker "${SOURCE_DIR}/cmake/check_law_layering.cmake")
set(failures "")

# Runs the checker on root; sets rc and out in the caller.
function(check root)
  execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${root} -P ${checker}
                  RESULT_VARIABLE code OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  set(rc "${code}" PARENT_SCOPE)
  set(out "${stdout}${stderr}" PARENT_SCOPE)
endfunction()

# A copy of the tree's law/, common/ and include/, plus a header of another
# part for the bad includes to find.
function(make_tree root)
  file(REMOVE_RECURSE "${root}")
  file(MAKE_DIRECTORY "${root}/controller")
  file(COPY "${SOURCE_DIR}/controller/law" "${SOURCE_DIR}/controller/common"
       DESTINATION "${root}/controller")
  file(COPY "${SOURCE_DIR}/include" DESTINATION "${root}")
  file(WRITE "${root}/controller/signals/signal_source.h" "#pragma once\n")
  file(WRITE "${root}/controller/config/config.h" "#pragma once\n")
endfunction()

# Precondition: the tree itself passes.
check("${SOURCE_DIR}")
if(NOT rc EQUAL 0)
  string(APPEND failures "the tree's own law/ fails the check:\n${out}\n")
endif()

# Each case: name | file of law/ | line added | text the failure must show
# (empty: the line is allowed and the check must pass).
set(cases
    "signals header|pressure.h|#include \"signals/signal_source.h\"|controller/law/pressure.h: '#include \"signals/signal_source.h\"' is controller/signals/signal_source.h, outside law/"
    "relative path out of law|policy.cpp|#include \"../config/config.h\"|controller/law/policy.cpp: '#include \"../config/config.h\"' is controller/config/config.h"
    "angle brackets into the tree|idle_reclaim.cpp|#include <config/config.h>|controller/law/idle_reclaim.cpp: '#include <config/config.h>' is controller/config/config.h"
    "generated header|overrides.cpp|#include \"edgeshed.skel.h\"|controller/law/overrides.cpp: '#include \"edgeshed.skel.h\"' is in none of law/, common/ and include/"
    "file I/O|level_machine.cpp|#include <fstream>|controller/law/level_machine.cpp: '#include <fstream>' is an I/O header"
    "logging|control_law.cpp|#include <spdlog/spdlog.h>|controller/law/control_law.cpp: '#include <spdlog/spdlog.h>' is an I/O header"
    "reading the clock|control_law.cpp|auto t = std::chrono::steady_clock::now()|controller/law/control_law.cpp: reads a clock itself"
    "law, common and include|pressure.cpp|#include \"common/result.h\"\n#include \"edgeshed/abi.h\"\n#include \"types.h\"\n#include <vector>|")
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
  set(root "${WORK_DIR}/case${index}")
  make_tree("${root}")
  file(APPEND "${root}/controller/law/${file}" "${line}\n")
  check("${root}")
  string(REGEX REPLACE "[ \n]+" " " flat "${out}")
  if(expect STREQUAL "")
    if(NOT rc EQUAL 0)
      string(APPEND failures "${name}: allowed, but the check failed:\n${out}\n")
    endif()
  elseif(rc EQUAL 0)
    string(APPEND failures "${name}: the check passed law/${file} with '${line}'\n")
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
message(STATUS "law/ layering check: the tree passes, ${index} cases behave")
