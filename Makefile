# `make demo` runs the CPU demo, `make test` runs every test; both build and install pytc into .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SOURCES := pyproject.toml CMakeLists.txt $(shell find dialects passes pytc runtime -type f -not -path '*/__pycache__/*')

.PHONY: demo test lint clean

$(VENV)/installed: $(SOURCES)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet '.[test]'
	touch $@

demo: $(VENV)/installed
	$(BIN)/python examples/demo.py

test: $(VENV)/installed
	$(BIN)/lit -sv test
	$(BIN)/pytest
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) build
