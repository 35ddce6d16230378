# Two commands do everything: `make lab` and `make test`. Both build .venv first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: lab test venv kernel check-java bench bench-spark clean

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

test: kernel check-java
	$(PY) -m pytest $(PYTEST_ARGS)

bench: kernel
	$(PY) benchmarks/bench_families.py
	$(PY) benchmarks/bench_partitions.py
	$(PY) benchmarks/bench_core.py
	$(PY) benchmarks/bench_ui.py

bench-spark: $(STAMP)
	$(PY) benchmarks/bench_spark.py

clean:
	rm -rf $(VENV)
