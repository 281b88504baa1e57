# The libFuzzer targets: one <name>_fuzz.cpp each in this folder, seeds in
# tests/fuzz/corpus/<name>/, crash inputs kept as regressions in
# tests/fuzz/regressions/<name>/. Read by the fuzz build (CMakeLists.txt
# here, clang) and by the main build, which makes a ctest case
# fuzz.<name> of each but the whole-program ones; `make fuzz` runs them all.
set(EDGESHED_FUZZ_TARGETS config prometheus_text psi netstat cli_args)

# Sources of the code under test each target links, beyond the core below
# (paths from the repository root). Targets not listed link the core only.
set(EDGESHED_FUZZ_CORE_SOURCES
    controller/signals/parse/prometheus_text.cpp controller/signals/parse/histogram.cpp
    controller/signals/parse/psi.cpp controller/signals/parse/netstat.cpp)
# Every signal kind, which the config target checks through the kinds' table
# (signals/signal_kinds.cpp), and what their sources need to link (nothing
# of it but the key checks runs).
file(GLOB EDGESHED_FUZZ_SIGNALS_SOURCES RELATIVE ${EDGESHED_SOURCE_DIR}
     ${EDGESHED_SOURCE_DIR}/controller/signals/*.cpp)
list(APPEND EDGESHED_FUZZ_CORE_SOURCES ${EDGESHED_FUZZ_SIGNALS_SOURCES})
# The config, a file of each section, and the value types of common/ it reads.
file(GLOB EDGESHED_FUZZ_CONFIG_SOURCES RELATIVE ${EDGESHED_SOURCE_DIR}
     ${EDGESHED_SOURCE_DIR}/controller/config/*.cpp ${EDGESHED_SOURCE_DIR}/controller/common/*.cpp)
list(APPEND EDGESHED_FUZZ_CORE_SOURCES ${EDGESHED_FUZZ_CONFIG_SOURCES})
# The law's vocabulary (to_string, defaults) that the config refers to.
file(GLOB EDGESHED_FUZZ_LAW_SOURCES RELATIVE ${EDGESHED_SOURCE_DIR}
     ${EDGESHED_SOURCE_DIR}/controller/law/*.cpp)
list(APPEND EDGESHED_FUZZ_CORE_SOURCES ${EDGESHED_FUZZ_LAW_SOURCES})

# The CLI's parser is built by the command files, whose callbacks name every
# part of the program, so cli_args links all of the userspace but the
# binary's entry, controller/main.cpp (nothing of it but parsing runs). EDGESHED_FUZZ_WHOLE_PROGRAM tells the
# fuzz build to make the skeletons and find the libraries that needs.
file(GLOB EDGESHED_FUZZ_SOURCES_cli_args RELATIVE ${EDGESHED_SOURCE_DIR}
     ${EDGESHED_SOURCE_DIR}/controller/cli/*.cpp ${EDGESHED_SOURCE_DIR}/controller/ipc/*.cpp
     ${EDGESHED_SOURCE_DIR}/controller/daemon/*.cpp
     ${EDGESHED_SOURCE_DIR}/controller/dataplane/*.cpp ${EDGESHED_SOURCE_DIR}/controller/signals/*.cpp
     ${EDGESHED_SOURCE_DIR}/controller/signals/parse/*.cpp)
list(REMOVE_ITEM EDGESHED_FUZZ_SOURCES_cli_args ${EDGESHED_FUZZ_CORE_SOURCES})
set(EDGESHED_FUZZ_WHOLE_PROGRAM cli_args)
