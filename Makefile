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

.PHONY: all deps configure install test test-unit demo bench-dataplane bench-controller clean format

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

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h' | grep -v '^bpf/')

clean:
	rm -rf build build-sanitize
