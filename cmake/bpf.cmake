# Builds BPF objects with clang and generates their libbpf skeletons.
find_program(BPF_CLANG NAMES clang-14 clang REQUIRED)
find_program(BPFTOOL bpftool PATHS /usr/sbin /sbin REQUIRED)

# The repository root: the main build's, or the fuzz build's (tests/fuzz/
# libfuzzer), which makes the skeletons the CLI it fuzzes includes.
if(NOT EDGESHED_ROOT)
  set(EDGESHED_ROOT ${CMAKE_SOURCE_DIR})
endif()
set(EDGESHED_BPF_OUT ${CMAKE_BINARY_DIR}/bpf)
file(MAKE_DIRECTORY ${EDGESHED_BPF_OUT})

execute_process(COMMAND uname -m OUTPUT_VARIABLE _arch OUTPUT_STRIP_TRAILING_WHITESPACE)
string(REPLACE "x86_64" "x86" _arch "${_arch}")
string(REPLACE "aarch64" "arm64" _arch "${_arch}")
set(EDGESHED_BPF_ARCH ${_arch})

# vmlinux.h is regenerated only when the running kernel's BTF changed, so a
# rebuild does not recompile every BPF object for nothing.
set(VMLINUX_H ${EDGESHED_BPF_OUT}/vmlinux.h)
add_custom_target(vmlinux_h
  COMMAND ${BPFTOOL} btf dump file /sys/kernel/btf/vmlinux format c > ${VMLINUX_H}.tmp
  COMMAND cmp -s ${VMLINUX_H}.tmp ${VMLINUX_H} || mv ${VMLINUX_H}.tmp ${VMLINUX_H}
  COMMAND rm -f ${VMLINUX_H}.tmp
  BYPRODUCTS ${VMLINUX_H}
  COMMENT "vmlinux.h from /sys/kernel/btf/vmlinux")

file(GLOB EDGESHED_BPF_HEADERS CONFIGURE_DEPENDS
     ${EDGESHED_ROOT}/bpf/*.h ${EDGESHED_ROOT}/include/edgeshed/*.h)

function(edgeshed_bpf_object name src)
  set(obj ${EDGESHED_BPF_OUT}/${name}.bpf.o)
  set(skel ${EDGESHED_BPF_OUT}/${name}.skel.h)
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${BPF_CLANG} -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_${EDGESHED_BPF_ARCH}
            -Wall -Werror -I${EDGESHED_BPF_OUT} -I${EDGESHED_ROOT}/include
            -I${EDGESHED_ROOT}/bpf -c ${EDGESHED_ROOT}/${src} -o ${obj}.tmp.o
    # bpftool gen object links and strips DWARF the kernel does not need.
    COMMAND ${BPFTOOL} gen object ${obj} ${obj}.tmp.o
    COMMAND rm -f ${obj}.tmp.o
    DEPENDS ${EDGESHED_ROOT}/${src} ${EDGESHED_BPF_HEADERS} vmlinux_h ${VMLINUX_H}
    COMMENT "BPF ${src}")
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${BPFTOOL} gen skeleton ${obj} name ${name}_bpf > ${skel}.tmp
    COMMAND mv ${skel}.tmp ${skel}
    DEPENDS ${obj}
    COMMENT "skeleton ${name}.skel.h")
  add_custom_target(${name}_skel ALL DEPENDS ${skel})
endfunction()
