# Top-level entry points; CMake does the building into build/.
BUILD ?= build
SANITIZE ?= 0
JOBS ?= $(shell nproc)
# make install: where to, and an optional staging root (packagers).
PREFIX ?= /usr/local
DESTDIR ?=

ifeq ($(SANITIZE),1)
BUILD := build-sanitize
CMAKE_FLAGS += -DEDGESHED_SANITIZE=ON
endif

.PHONY: all deps configure install test test-unit demo bench-dataplane bench-controller clean format \
	fuzz soak

all: configure
	cmake --build $(BUILD) -j $(JOBS)

deps:
	scripts/deps.sh

# The binary, its man page, the systemd unit, the bash completion and the
# example config under $(DESTDIR)$(PREFIX); see cmake/install.cmake.
install: all
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

configure:
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

# The whole suite: unit, data plane (BPF_PROG_TEST_RUN) and namespace tests.
# Installs what it needs first, so it works on a fresh machine.
test: deps
	$(MAKE) all
	cd $(BUILD) && ctest --output-on-failure --timeout 600

test-unit: all
	cd $(BUILD) && ctest --output-on-failure -R '^unit\.'

# The classic overload case without and with edgeshed, in a lab of network
# namespaces: prints the two runs side by side and plots them.
demo: deps
	$(MAKE) all
	bash scripts/demo.sh

bench-dataplane: deps
	$(MAKE) all
	$(BUILD)/bench_dataplane

bench-controller: deps
	$(MAKE) all
	EDGESHED=$(BUILD)/edgeshed TCP_TOOL=$(BUILD)/tcp_tool bash tests/bench/bench_controller.sh

# Fuzzing for a bounded time, on new seeds each run: every libFuzzer target
# (clang build in $(BUILD)/fuzz) for FUZZ_SECONDS, then the packet fuzzer
# for FUZZ_SECONDS spread over its six data-plane configurations. A failure
# of one does not stop the others; the exit status says if any failed.
FUZZ_SECONDS ?= 60
fuzz: deps
	$(MAKE) all
	@rc=0; \
	bash scripts/fuzz.sh all $(BUILD)/fuzz $(FUZZ_SECONDS) || rc=1; \
	cd $(BUILD) && EDGESHED_FUZZ_SEED=time EDGESHED_FUZZ_FRAMES=1000000000 \
		EDGESHED_FUZZ_SECONDS=$$(( ($(FUZZ_SECONDS) + 5) / 6 )) \
		./packet_fuzz --gtest_brief=1 --gtest_filter='Phases/*' || rc=1; \
	exit $$rc

# The soak: the lab for SOAK_SECONDS (600) under alternating overload and
# calm; fails on memory or fd growth in the daemon, counter drift or level
# flapping (tests/netns/soak.sh says how each is measured).
SOAK_SECONDS ?= 600
soak: deps
	$(MAKE) all
	SOAK_SECONDS=$(SOAK_SECONDS) EDGESHED=$(BUILD)/edgeshed TCP_TOOL=$(BUILD)/tcp_tool \
		REFSERVER=$(BUILD)/refserver LOADGEN=$(BUILD)/loadgen bash tests/netns/soak.sh

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h' | grep -v '^bpf/')

clean:
	rm -rf build build-sanitize
