# kafka-format: `make demo` and `make test` are the whole set-up on a fresh clone.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
NPM_DIR := .tools/npm
KSC := $(NPM_DIR)/node_modules/kaitai-struct-compiler

.PHONY: setup browser generate test check demo bench lint clean

setup: $(VENV)/.installed $(NPM_DIR)/.installed
	@$(PY) scripts/warm_kernels.py

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,spark,connect]'
	touch $@

$(NPM_DIR)/.installed: scripts/package.json scripts/package-lock.json
	mkdir -p $(NPM_DIR)
	cp scripts/package.json scripts/package-lock.json $(NPM_DIR)/
	cd $(NPM_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Headless Chromium for the test of inspect's HTML page (Debian's package; we run as root here).
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

generate: setup
	$(PY) scripts/generate.py

test: setup browser
	$(PY) -m pytest

# The fast loop: everything but Spark, the browser and the slow packaging/bench tests.
check: setup
	$(PY) -m pytest -q -m "not spark and not browser and not slow"

demo: setup
	$(PY) scripts/demo.py

bench: setup
	$(PY) bench/run.py

lint: setup
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

clean:
	rm -rf $(VENV) .tools build dist *.egg-info demo-out
