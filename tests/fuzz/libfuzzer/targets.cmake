# The libFuzzer targets: one <name>_fuzz.cpp each in this folder, seeds in
# tests/fuzz/corpus/<name>/, crash inputs kept as regressions in
# tests/fuzz/regressions/<name>/. Read by the fuzz build (CMakeLists.txt
# here, clang) and by the main build, which makes a ctest case
# fuzz.<name> of each and runs them in `make fuzz`.
#
# Hook for the CLI arguments target (issue #8, once the CLI refactor has
# landed): write cli_args_fuzz.cpp here, splitting the input at NUL bytes
# into an argv and handing it to the CLI's argument parsing (without running
# the command); add cli_args to the list below and its sources to
# EDGESHED_FUZZ_SOURCES_cli_args; put a few argument vectors (NUL-separated)
# in tests/fuzz/corpus/cli_args/. Nothing else needs to change.
set(EDGESHED_FUZZ_TARGETS config prometheus_text psi netstat)

# Sources of the code under test each target links, beyond the core below
# (paths from the repository root). Targets not listed link the core only.
set(EDGESHED_FUZZ_CORE_SOURCES
    controller/config/config.cpp controller/config/duration.cpp
    controller/config/ip_prefix.cpp controller/config/toml_reader.cpp
    controller/signals/prometheus_text.cpp controller/signals/histogram.cpp
    controller/signals/psi_signal.cpp controller/signals/netstat.cpp
    # The options parsers of the signal kinds the config target checks, and
    # what their sources need to link (nothing of it runs).
    controller/signals/signal_params.cpp controller/signals/prometheus_signal.cpp
    controller/signals/probe_signal.cpp controller/signals/netstat_signal.cpp
    controller/signals/http_client.cpp controller/signals/net_io.cpp
    controller/signals/periodic_worker.cpp)
# The law's vocabulary (to_string, defaults) that the config refers to.
file(GLOB EDGESHED_FUZZ_LAW_SOURCES RELATIVE ${EDGESHED_SOURCE_DIR}
     ${EDGESHED_SOURCE_DIR}/controller/law/*.cpp)
list(APPEND EDGESHED_FUZZ_CORE_SOURCES ${EDGESHED_FUZZ_LAW_SOURCES})
# set(EDGESHED_FUZZ_SOURCES_cli_args controller/cli/....cpp)
