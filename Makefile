# kafka-format: `make demo` and `make test` are the whole set-up on a fresh clone.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
NPM_DIR := .tools/npm
KSC := $(NPM_DIR)/node_modules/kaitai-struct-compiler

.PHONY: setup browser generate test demo bench lint clean

setup: $(VENV)/.installed $(NPM_DIR)/.installed
	@# Compile the numba kernels into their on-disk cache now (seconds, once per change of
	@# runtime/fastscan.py) rather than in the first read; a bytes and a bytearray source,
	@# as their buffers are typed apart. Under a second when the cache is warm.
	@$(PY) -c "from kafka_format import read_table; \
	from kafka_format.schemas.record_batch import build_record_batch; \
	data = build_record_batch([{'key': b'k', 'value': b'v', 'headers': [('h', b'x')]}]); \
	[read_table(source, include_headers=True) for source in (data, bytearray(data))]"

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,spark]'
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

demo: setup
	$(PY) scripts/demo.py

bench: setup
	$(PY) bench/run.py

lint: setup
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

clean:
	rm -rf $(VENV) .tools build dist *.egg-info demo-out
