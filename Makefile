# Top-level entry points; CMake does the building into build/.
SHELL := /bin/bash
BUILD ?= build
SANITIZE ?= 0
JOBS ?= $(shell nproc)
# make install: where to, and an optional staging root (packagers).
PREFIX ?= /usr/local
DESTDIR ?=

# The sanitizer build is a debug build: -O0 halves its compile time (the
# tests' time is in starting processes, not in our code), and the libraries'
# own assertions (nlohmann, toml++) check our use of them as well. It is
# built by clang, which compiles it in half gcc's time (unit_tests and
# bpf_tests: 185 against 385 s at -j2), and so a second compiler checks that
# the code builds warning-free; the plain build stays gcc.
ifeq ($(SANITIZE),1)
BUILD := build-sanitize
CMAKE_FLAGS += -DEDGESHED_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang-14 \
	-DCMAKE_CXX_COMPILER=clang++-14
endif

.PHONY: all deps configure install test test-build test-unit demo bench bench-tools bench-dataplane \
	bench-synflood bench-refusal bench-saturation bench-overload bench-controller bench-never-harm-pods bench-servers bench-cold-gate bench-report clean format \
	fuzz soak lint

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
#
# With SANITIZE=1, only the unit and data-plane tests, built with ASan and
# UBSan: these run our C++ on the inputs the tests craft, and the first report
# fails the test. The namespace, deploy, fuzz and benchmark cases drive the
# binaries from the outside with timings of their own; under the sanitizers'
# slowdown they would test the timing, and `make fuzz` has its own ASan build.
SANITIZER_ENV = ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Tests run JOBS at once, but for those marked RUN_SERIAL (CMakeLists.txt):
# the namespace and data-plane tests, which time real traffic or attach to
# the kernel, run alone.
# `make test-build` builds what `make test` runs, without running it (CI
# builds the sanitizer tests while the others run).
ifeq ($(SANITIZE),1)
test-build: deps
	$(MAKE) configure
	$(SANITIZER_ENV) cmake --build $(BUILD) -j $(JOBS) --target unit_tests bpf_tests
test: test-build
	cd $(BUILD) && $(SANITIZER_ENV) ctest --output-on-failure --timeout 600 -j $(JOBS) -R '^(unit|bpf)\.'
else
test-build: deps
	$(MAKE) all
test: test-build
	cd $(BUILD) && ctest --output-on-failure --timeout 600 -j $(JOBS)
endif

test-unit: all
	cd $(BUILD) && ctest --output-on-failure -R '^unit\.'

# The classic overload case without and with edgeshed, in a lab of network
# namespaces: prints the two runs side by side and plots them.
# Builds only the four programs it runs, not the tests.
DEMO_TOOLS = edgeshed tcp_tool refserver loadgen
demo: deps configure
	cmake --build $(BUILD) -j $(JOBS) --target $(DEMO_TOOLS)
	bash scripts/demo.sh

# Benchmarks: each prints its tables (absolute figures and ratios) and writes
# them with its plots under $(BENCH_OUT)/NAME/. `make bench` runs all six and
# then writes BENCHMARKS.md and docs/bench/*.png from the results.
BENCH_OUT ?= $(BUILD)/bench
BENCH_TOOLS = edgeshed tcp_tool refserver loadgen synflood bench_dataplane baseline_skel rst_sink_skel \
	bench_cold_gate
B = $(abspath $(BUILD))
BENCH_ENV = EDGESHED=$(B)/edgeshed TCP_TOOL=$(B)/tcp_tool REFSERVER=$(B)/refserver LOADGEN=$(B)/loadgen \
	SYNFLOOD=$(B)/synflood BPF_OUT=$(B)/bpf BENCH_DATAPLANE=$(B)/bench_dataplane BENCH_OUT=$(abspath $(BENCH_OUT))

bench-tools: deps configure
	cmake --build $(BUILD) -j $(JOBS) --target $(BENCH_TOOLS)

# The run's log notes its start before the build and the end of the build.
bench:
	@rm -f $(BENCH_OUT)/run.log
	@mkdir -p $(BENCH_OUT)
	@echo "make bench: started $$(date -u '+%Y-%m-%d %H:%M:%S UTC'), load average $$(cut -d' ' -f1-3 /proc/loadavg)" | \
		tee $(BENCH_OUT)/run.log
	@echo "make bench: commit $$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$$(git status --porcelain \
		--untracked-files=no 2>/dev/null | grep -qv 'BENCHMARKS.md\|docs/bench/' && echo ' (with local changes)')" | \
		tee -a $(BENCH_OUT)/run.log
	$(MAKE) --no-print-directory bench-tools
	@echo "make bench: built $$(date -u '+%Y-%m-%d %H:%M:%S UTC')" | tee -a $(BENCH_OUT)/run.log
	$(MAKE) --no-print-directory bench-dataplane bench-synflood bench-refusal bench-saturation \
		bench-overload bench-controller BENCH_SKIP_TOOLS=1 2>&1 | tee -a $(BENCH_OUT)/run.log; \
		test $${PIPESTATUS[0]} -eq 0
	@echo "make bench: finished $$(date -u '+%Y-%m-%d %H:%M:%S UTC')" | tee -a $(BENCH_OUT)/run.log
	$(MAKE) --no-print-directory bench-report

# The single benchmarks rebuild their tools, unless `make bench` just did.
ifeq ($(BENCH_SKIP_TOOLS),1)
BENCH_DEP =
else
BENCH_DEP = bench-tools
endif

bench-dataplane: $(BENCH_DEP)
	$(BENCH_ENV) bash tests/bench/bench_dataplane.sh

bench-synflood: $(BENCH_DEP)
	$(BENCH_ENV) bash tests/bench/bench_synflood.sh

bench-refusal: $(BENCH_DEP)
	$(BENCH_ENV) bash tests/bench/bench_refusal.sh

bench-saturation: $(BENCH_DEP)
	$(BENCH_ENV) bash tests/bench/bench_saturation.sh

bench-overload: $(BENCH_DEP)
	$(BENCH_ENV) bash tests/bench/bench_overload.sh

# The server matrix (nginx, asyncio, thread-per-connection, refserver; no
# shedding, edgeshed with only the port named, an in-process semaphore, a
# static cap): long, and not part of `make bench`. BENCH_SERVERS_QUICK=1 for
# the quick subset; the other knobs are in tests/bench/bench_servers.sh.
bench-servers: $(BENCH_DEP)
	$(BENCH_ENV) bash tests/bench/bench_servers.sh

# The never-harm matrix (tests/netns/test_never_harm.sh) with the service in
# a pod's namespace behind the node's interface; `make test` runs one case
# of it (netns.test_never_harm_pod). Long, and not part of `make bench`.
bench-never-harm-pods: $(BENCH_DEP)
	$(BENCH_ENV) NEVER_HARM_IN_POD=1 bash tests/netns/test_never_harm.sh
	$(BENCH_ENV) NEVER_HARM_IN_POD=cgroup bash tests/netns/test_never_harm.sh
	$(BENCH_ENV) SV_POD=cgroup bash tests/netns/test_heavy_tail.sh
	$(BENCH_ENV) SV_POD=cgroup GO_HTTP_CLIENT=$(B)/go_http_client bash tests/netns/test_keepalive_clients.sh

bench-controller: $(BENCH_DEP)
	@mkdir -p $(BENCH_OUT)/controller
	$(BENCH_ENV) bash tests/bench/bench_controller.sh 2>&1 | tee $(BENCH_OUT)/controller/table.txt; \
		test $${PIPESTATUS[0]} -eq 0

# Why a cold start has no queue gate: the gate from the first request on the
# simulated service, what it refuses of healthy services and what it leaves
# of an overload's queue (seconds; no kernel, no lab).
bench-cold-gate: $(BENCH_DEP)
	@mkdir -p $(BENCH_OUT)/cold-gate
	$(B)/bench_cold_gate | tee $(BENCH_OUT)/cold-gate/table.txt; test $${PIPESTATUS[0]} -eq 0

# BENCHMARKS.md and docs/bench/*.png from the results of the last `make bench`.
bench-report:
	BENCH_OUT=$(abspath $(BENCH_OUT)) bash scripts/bench_report.sh

# Fuzzing for a bounded time, on new seeds each run: every libFuzzer target
# (clang build in $(BUILD)/fuzz) for FUZZ_SECONDS and at least FUZZ_MIN_RUNS
# (10^6) inputs, at most FUZZ_MAX_SECONDS (300) more, then the packet fuzzer
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

# clang-tidy and cppcheck on the userspace C++ and clang-tidy on the BPF C,
# in a build folder of their own; any finding fails (scripts/lint.sh).
LINT_BUILD ?= build-lint
lint: deps
	JOBS=$(JOBS) bash scripts/lint.sh $(LINT_BUILD)

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h' | grep -v '^bpf/')

clean:
	rm -rf build build-sanitize build-lint
