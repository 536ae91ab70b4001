# `make demo` runs the CPU demo, `make test` runs every test; both build and install pytc into .venv first, and copy the
# built libraries into the checkout so that Python started in its root imports pytc from the sources.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SOURCES := pyproject.toml CMakeLists.txt $(shell find dialects passes pytc runtime -type f -not -path '*/__pycache__/*')

.PHONY: demo test lint clean

$(VENV)/installed: $(SOURCES)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet '.[test]'
	installed=$$($(BIN)/python -P -c 'import pytc, pathlib; print(pathlib.Path(pytc.__file__).parent)') && \
	  cp $$installed/libpytc_uop.so pytc/ && cp $$installed/dialects/_uop_ops_gen.py pytc/dialects/ && \
	  cp $$installed/runtime/libpytc_parallel.so runtime/
	touch $@

demo: $(VENV)/installed
	$(BIN)/python examples/demo.py

test: $(VENV)/installed
	$(BIN)/lit -sv test
	$(BIN)/pytest
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) build
