# The two commands of the quick start:
#   make demo   installs what is missing, builds, plans resnet50 at batch 64 on an RTX 3090
#   make test   installs what is missing, builds, runs every test (scripts/test.sh)
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: demo test build deps bench clean install

deps:
	./scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

demo: build
	./$(BUILD)/oomguard plan resnet50 --batch 64 --gpu rtx-3090

test:
	./scripts/test.sh

# Installs into PREFIX (default /usr/local): CLI, libraries, headers, find_package(oomguard), Python package.
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

bench: deps
	cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DOOMGUARD_BUILD_BENCH=ON -DOOMGUARD_BUILD_TESTS=OFF >/dev/null
	cmake --build build-bench -j$(JOBS)

clean:
	rm -rf build build-asan build-tsan build-fuzz build-bench
