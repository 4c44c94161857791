# The two commands: `make run` and `make test`. Both install what is missing, configure and build.
# The build is for the project's Python environment .venv (PyTorch 2 from PyPI, requirements.txt):
# after it, `. .venv/bin/activate` gives `import parasol` and the `parasol` command of this build.
BUILD_DIR ?= build
VENV := $(CURDIR)/.venv
PYTHON := $(VENV)/bin/python
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
MPIRUN := scripts/mpirun.sh
PARASOL := $(BUILD_DIR)/tools/parasol

FUZZ_SECONDS ?= 3

.PHONY: all deps configure build install run test lint format fuzz sanitize bench clean

all: build

deps:
	@bash scripts/install-deps.sh

# Ninja: every target's objects in one graph, so both cores stay busy where Makefiles wait for a
# library's link before its dependents compile (a build directory made with another generator keeps it).
GENERATOR = $(if $(wildcard $(BUILD_DIR)/CMakeCache.txt),,-G Ninja)

configure: deps
	@cmake -S . -B $(BUILD_DIR) $(GENERATOR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DPython_EXECUTABLE=$(PYTHON) >/dev/null

# The build, then the build tree linked into .venv: a .pth puts build/python on its path and
# .venv/bin/parasol is this build's command (`pip install .` installs a copy instead).
build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)
	@echo "$(abspath $(BUILD_DIR))/python" > "$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/parasol-build.pth"
	@ln -sf "$(abspath $(PARASOL))" $(VENV)/bin/parasol

# `parasol` on PATH: the command and libparasol_train.so into $(PREFIX)/bin (and the Python package
# into .venv, as the build links it).
PREFIX ?= /usr/local
install: build
	@cmake --install $(BUILD_DIR) --prefix $(PREFIX) >/dev/null
	@echo "installed $(PREFIX)/bin/parasol"

# Main job: a topic model of the bundled AP corpus (2,246 news articles); prints the topics and
# writes the model, topics.txt and doc_topics.txt to $(BUILD_DIR)/lda-ap.
run: build
	$(PARASOL) lda --corpus data/ap/ap.dat --topics 50 --iterations 100 --eval-every 10 --threads $(JOBS) \
	  --output $(BUILD_DIR)/lda-ap

# The suite, then every reader fuzzed for FUZZ_SECONDS (0 skips it; see fuzz/).
test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)
	@if [ "$(FUZZ_SECONDS)" != 0 ]; then bash scripts/fuzz.sh $(FUZZ_SECONDS); fi

# The style gate: the formatter (.clang-format), 110 columns and the layer rule. `make format`
# applies the formatter to every tracked C++ file.
lint:
	@bash scripts/lint.sh

format:
	@git ls-files '*.cc' '*.h' | xargs clang-format -i

# Every libFuzzer target for FUZZ_SECONDS each: make fuzz FUZZ_SECONDS=600
fuzz: deps
	bash scripts/fuzz.sh $(FUZZ_SECONDS)

# The suite under ASan+UBSan (build-asan) and the threaded tests under TSan (build-tsan): gcc,
# -O1, assertions on. One of them: make sanitize SANITIZERS=tsan
SANITIZERS ?= asan tsan
sanitize: deps
	@for s in $(SANITIZERS); do bash scripts/sanitize.sh $$s || exit 1; done

bench: build
	bash bench/run_all.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR) build-asan build-tsan
