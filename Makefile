# The two commands: `make run` and `make test`. Both install what is missing, configure and build.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
MPIRUN := scripts/mpirun.sh
PARASOL := $(BUILD_DIR)/tools/parasol

.PHONY: all deps configure build run test bench clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# Main job. Until the topic-model application exists: a short allreduce benchmark on 2 ranks.
run: build
	$(MPIRUN) -np 2 $(PARASOL) allreduce-bench --sizes 8,64K,1M,16M --iters 20

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	bash bench/run_all.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
