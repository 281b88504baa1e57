# Generated deployment files and the install tree (`make install`,
# `cmake --install build [--prefix P]`, both honouring DESTDIR):
#   sbin/edgeshed                               the binary; its BPF objects are
#                                               embedded by the skeletons
#   share/man/man8/edgeshed.8                   from the CLI's --help, at build time
#   lib/systemd/system/edgeshed.service         ExecStart under the install prefix
#   lib/sysusers.d/edgeshed.conf                the user the unit runs as
#   share/bash-completion/completions/edgeshed  from `edgeshed completion bash`
#   share/doc/edgeshed/README.md
#   share/doc/edgeshed/examples/edgeshed.toml   copied to /etc/edgeshed/ by the admin
# The configuration itself is not installed: /etc is the admin's, and the
# example (eth0, an injected-pressure file) is a starting point, not a policy.
include(GNUInstallDirs)

set(EDGESHED_CONFIG_FILE "/etc/edgeshed/edgeshed.toml" CACHE STRING
    "Configuration file the systemd unit passes to `edgeshed run`")
# Relative: under the install prefix, so /usr/local/lib/systemd/system for the
# default prefix, a directory systemd searches. Packagers may give an
# absolute path.
set(EDGESHED_SYSTEMD_UNITDIR "lib/systemd/system" CACHE STRING
    "Where the systemd unit is installed (relative to the prefix, or absolute)")
set(EDGESHED_SYSUSERSDIR "lib/sysusers.d" CACHE STRING
    "Where the sysusers.d file of the unit's user is installed (relative to the prefix, or absolute)")
# AUTO: installed when the binary has the hidden `completion` subcommand;
# ON: a binary without it fails the build; OFF: never generated.
set(EDGESHED_BASH_COMPLETION "AUTO" CACHE STRING "Bash completion: AUTO, ON or OFF")
set_property(CACHE EDGESHED_BASH_COMPLETION PROPERTY STRINGS AUTO ON OFF)

set(EDGESHED_DEPLOY_OUT ${CMAKE_BINARY_DIR}/deploy)
file(MAKE_DIRECTORY ${EDGESHED_DEPLOY_OUT})

# The man page is written by running the binary just built: every subcommand's
# --help, so the page follows the CLI. (A cross build would need a host binary.)
set(EDGESHED_MANPAGE ${EDGESHED_DEPLOY_OUT}/edgeshed.8)
add_custom_command(
  OUTPUT ${EDGESHED_MANPAGE}
  COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/gen_manpage.sh $<TARGET_FILE:edgeshed>
          ${EDGESHED_MANPAGE}
  DEPENDS edgeshed ${CMAKE_SOURCE_DIR}/scripts/gen_manpage.sh
  COMMENT "man page edgeshed.8 from edgeshed --help")
add_custom_target(manpage ALL DEPENDS ${EDGESHED_MANPAGE})

set(EDGESHED_COMPLETION ${EDGESHED_DEPLOY_OUT}/edgeshed.bash)
if(NOT EDGESHED_BASH_COMPLETION STREQUAL "OFF")
  # The stamp, not the completion, is the output: with AUTO and a binary
  # without the subcommand there is no completion file to produce.
  add_custom_command(
    OUTPUT ${EDGESHED_DEPLOY_OUT}/completion.stamp
    COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/gen_completion.sh $<TARGET_FILE:edgeshed>
            ${EDGESHED_COMPLETION} ${EDGESHED_BASH_COMPLETION}
    COMMAND ${CMAKE_COMMAND} -E touch ${EDGESHED_DEPLOY_OUT}/completion.stamp
    DEPENDS edgeshed ${CMAKE_SOURCE_DIR}/scripts/gen_completion.sh
    COMMENT "bash completion from edgeshed completion bash")
  add_custom_target(bash_completion ALL DEPENDS ${EDGESHED_DEPLOY_OUT}/completion.stamp)
else()
  file(REMOVE ${EDGESHED_COMPLETION})
endif()

install(TARGETS edgeshed RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR})
install(FILES ${EDGESHED_MANPAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)
# Installed only when generated (see EDGESHED_BASH_COMPLETION); install(FILES
# ... OPTIONAL) would still leave an empty completions directory behind.
install(CODE "
  if(EXISTS \"${EDGESHED_COMPLETION}\")
    file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/bash-completion/completions\"
         TYPE FILE RENAME edgeshed FILES \"${EDGESHED_COMPLETION}\"
         PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
  endif()
")
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES deploy/systemd/edgeshed.sysusers DESTINATION ${EDGESHED_SYSUSERSDIR}
        RENAME edgeshed.conf)
install(FILES examples/edgeshed.toml DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# The unit is configured at install time, not at configure time, so that
# ExecStart= follows the prefix given then (make install PREFIX=...,
# cmake --install --prefix ...) rather than the one cached when the build
# tree was configured.
install(CODE "
  set(_sbindir \"${CMAKE_INSTALL_SBINDIR}\")
  if(NOT IS_ABSOLUTE \"\${_sbindir}\")
    set(_sbindir \"\${CMAKE_INSTALL_PREFIX}/\${_sbindir}\")
  endif()
  set(_unitdir \"${EDGESHED_SYSTEMD_UNITDIR}\")
  if(NOT IS_ABSOLUTE \"\${_unitdir}\")
    set(_unitdir \"\${CMAKE_INSTALL_PREFIX}/\${_unitdir}\")
  endif()
  set(EDGESHED_SBINDIR \"\${_sbindir}\")
  set(EDGESHED_CONFIG_FILE \"${EDGESHED_CONFIG_FILE}\")
  configure_file(\"${CMAKE_SOURCE_DIR}/deploy/systemd/edgeshed.service.in\"
                 \"${EDGESHED_DEPLOY_OUT}/edgeshed.service\" @ONLY)
  file(INSTALL DESTINATION \"\${_unitdir}\" TYPE FILE
       FILES \"${EDGESHED_DEPLOY_OUT}/edgeshed.service\"
       PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
")
