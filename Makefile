# Two commands do everything: `make lab` and `make test`. Both build .venv first. `make check` is the fast tier for
# the edit loop: lint, types, and every test without Spark, a browser or a packaging run (docs/testing.md).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: lab app test check lint venv kernel check-java bench bench-spark check-beam engines test-engines clean

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null || { echo "error: Python 3.11 is needed (found: $(PYTHON))" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

# the compiled core: about a minute the first time, then loaded from its cache in under a second
kernel: $(STAMP)
	$(PY) -m explorer.core.compiled

check-java:
	@command -v java >/dev/null 2>&1 || { echo "error: 'java' not found. Spark needs Java 17 (e.g. apt-get install openjdk-17-jre-headless)." >&2; exit 1; }

lab: kernel check-java
	$(VENV)/bin/jupyter lab --ip=127.0.0.1 $(if $(filter root,$(shell whoami)),--allow-root) notebooks/explorer.ipynb

# the explorer and the teaching notebooks as a standalone app (Voilà): the same widgets, no code cells; token on,
# bound to 127.0.0.1 (the URL with its token is printed)
app: kernel check-java
	$(VENV)/bin/voila --token --Voila.ip=127.0.0.1 --no-browser notebooks/

lint: $(STAMP)
	$(VENV)/bin/ruff check explorer tests benchmarks dev
	$(VENV)/bin/mypy

# two workers: most of the suite's time is spent waiting on Spark and the browser, so two processes overlap it
test: lint kernel check-java
	$(PY) -m pytest -n 2 --dist loadgroup -m "not engines" $(PYTEST_ARGS)

# the exported jobs on the real engines (verify --engine flink|flink-java|beam|bytewax), each from its own venv
test-engines: kernel check-java engines
	$(PY) -m pytest -n 2 -m engines $(PYTEST_ARGS)

# the edit loop: the core properties with a fifth of their examples, the engines' scenario suites, the CLI and the
# UI's kernel side; no Spark, no browser, no packaging
check: lint kernel
	WX_EXAMPLES=0.2 $(PY) -m pytest -q -n 2 -m "not spark and not browser and not slow and not engines" $(PYTEST_ARGS)

bench: kernel
	$(PY) benchmarks/bench_families.py
	$(PY) benchmarks/bench_partitions.py
	$(PY) benchmarks/bench_core.py
	$(PY) benchmarks/bench_ui.py

bench-spark: $(STAMP)
	$(PY) benchmarks/bench_spark.py

# the real engines, each in a venv of its own (their pins clash with ours and with each other: apache-flink pins
# pyarrow 16, apache-beam protobuf < 7): `verify --engine flink|flink-java|beam|bytewax` runs the exported job there
ENGINES_DIR := .engines
ENGINE_PINS_flink := apache-flink==2.3.0 fastavro==1.13.1
ENGINE_PINS_beam := apache-beam==2.77.0 pandas==2.3.3 fastavro==1.13.1
ENGINE_PINS_bytewax := bytewax==0.21.1 pandas==2.3.3 pyarrow==26.0.1 fastavro==1.13.1
$(ENGINES_DIR)/%/.installed:
	$(PYTHON) -m venv $(ENGINES_DIR)/$*
	$(ENGINES_DIR)/$*/bin/pip install -qq --upgrade pip
	$(ENGINES_DIR)/$*/bin/pip install -qq $(ENGINE_PINS_$*)
	touch $@

engines: $(ENGINES_DIR)/flink/.installed $(ENGINES_DIR)/beam/.installed $(ENGINES_DIR)/bytewax/.installed

# the beam preset against the real Beam DirectRunner, pane by pane (dev/check_beam.py); not part of `make test`
check-beam: $(ENGINES_DIR)/beam/.installed
	$(ENGINES_DIR)/beam/bin/pip install --quiet pyyaml numba  # the script imports the explorer's core
	for panes in accumulating discarding; do for window in tumbling sliding; do for allowed in 0 1500; do \
	  PYTHONPATH=. $(ENGINES_DIR)/beam/bin/python dev/check_beam.py --window $$window --allowed $$allowed --panes $$panes \
	    > $(ENGINES_DIR)/beam/check.log 2>&1 || { tail -20 $(ENGINES_DIR)/beam/check.log; exit 1; }; \
	  grep -E '^(TOTAL|matched)' $(ENGINES_DIR)/beam/check.log; done; done; done

clean:
	rm -rf $(VENV) $(ENGINES_DIR)
