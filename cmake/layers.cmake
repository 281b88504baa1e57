# The layers of controller/, lowest first, and what each folder may include
# besides itself and include/ (edgeshed/abi.h). The one table: CMakeLists.txt
# links each folder's library to exactly these, and cmake/check_layering.cmake
# fails on an include outside them. Each list is closed downwards (what a
# layer below may include is listed too), as a folder's headers include its
# own dependencies' headers.
#
#   common     value types and small helpers: Result, Fd, IpPrefix, Duration,
#              latency histograms; no I/O
#   law        the control law: pure, no I/O, handed its clock
#   config     the configuration: files, sections, limits
#   signals    signal sources and their pure parsers (signals/parse/)
#   dataplane  libbpf wrappers, maps, events, attach; beside signals, and
#              neither includes the other
#   ipc        what crosses between the CLI and the daemon
#   daemon     the tick loop and everything it wires together
#   cli        every subcommand; talks to the daemon through ipc/ only
#   main.cpp   (controller/ itself) the binary's entry: cli and daemon
set(EDGESHED_LAYERS common law config signals dataplane ipc daemon cli)
set(EDGESHED_LAYER_common "")
set(EDGESHED_LAYER_law common)
set(EDGESHED_LAYER_config common law)
set(EDGESHED_LAYER_signals common law config)
set(EDGESHED_LAYER_dataplane common)
set(EDGESHED_LAYER_ipc common law config)
set(EDGESHED_LAYER_daemon common law config signals dataplane ipc)
set(EDGESHED_LAYER_cli common law config dataplane ipc)
# The files directly in controller/ (main.cpp).
set(EDGESHED_LAYER_main ${EDGESHED_LAYERS})

# Headers generated in the build tree that a folder may include (regexes):
# the data plane's bpftool skeletons.
set(EDGESHED_LAYER_GENERATED_dataplane "^[a-z_]+\\.skel\\.h$")

# Folders that must stay pure: no I/O header, no clock read of their own.
set(EDGESHED_PURE_LAYERS law)
