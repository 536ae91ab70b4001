# `make demo` runs the CPU demo, `make test` runs every test. Both first install pytc into .venv in editable mode: Python
# files are imported from the checkout itself (an edit takes effect at once), while the C++ dialect and the C runtime
# library are built by CMake into build/ and rebuilt here whenever their sources change.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
NATIVE := pyproject.toml CMakeLists.txt $(shell find dialects runtime -type f \( -name '*.td' -o -name '*.cpp' -o -name '*.h' -o -name '*.c' \))

.PHONY: demo test lint clean

$(VENV)/installed: $(NATIVE)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --editable '.[test]'
	touch $@

demo: $(VENV)/installed
	$(BIN)/python examples/demo.py

test: $(VENV)/installed
	$(BIN)/lit -sv test
	$(BIN)/pytest
	PYTC_DEVICE=EMU $(BIN)/pytest -q test/python/frontend/test_numerics.py test/python/frontend/test_dtype_sweep.py test/python/models/test_regressions.py
	PYTC_DEVICE=EMU $(BIN)/pytest -q test/python/models/test_models.py -k "resnet or transformer or pooling"
	PYTC_DEVICE=AMD:MOCK $(BIN)/pytest -q test/python/frontend/test_numerics.py test/python/frontend/test_jit.py test/python/scheduling/test_realize_edge.py test/python/scheduling/test_schedule.py test/python/frontend/test_elementwise_edge.py -k "not test_schedule or kernel_count"
	$(BIN)/ruff check .
	$(BIN)/ruff format --check passes runtime

clean:
	rm -rf $(VENV) build
