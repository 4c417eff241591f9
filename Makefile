# One entry point. `make serve` builds the model and the site and serves it;
# `make test` runs every test. Heavy artefacts go to $(ONEPASS_CACHE).

SOURCE ?= default
PORT ?= 8000
SITE_URL ?= http://127.0.0.1:$(PORT)/
VENV := .venv
PY := $(VENV)/bin/python
# The browser tests drive Debian's chromium through the Python playwright package (no browser download).
CHROMIUM := /usr/bin/chromium
export ONEPASS_CACHE ?= $(HOME)/.cache/onepass
export HF_HUB_DISABLE_TELEMETRY := 1

.PHONY: setup model corpus draft site serve lint check test bench bench-browser screenshots clean

setup: $(VENV)/.installed node_modules/.installed $(CHROMIUM)

$(CHROMIUM):
	apt-get update
	apt-get install -y chromium

# The lesson's Python (py/) is installed in place, so everything imports `onepass` without touching sys.path.
$(VENV)/.installed: requirements.txt py/pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e py
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

# Then its draft model (python -m draft, cached like the export): a draft committed for this model (draft/shipped/),
# assembled with the export's word table in seconds, nothing trained; else a quick one trained here (none is committed
# yet). Status 3 means none can be had for this model, and the site is built without one (step 6 says so).
model: setup build/.dir
	$(PY) -m model_export --source "$(SOURCE)" --prune > build/model_dir.txt.tmp 2>build/model_export.log || { cat build/model_export.log; exit 1; }
	mv build/model_dir.txt.tmp build/model_dir.txt
	@echo "model: $$(cat build/model_dir.txt)"
	$(PY) -m draft --target "$$(cat build/model_dir.txt)" > build/draft_dir.txt.tmp 2>build/draft.log; \
	  status=$$?; if [ $$status -eq 3 ]; then cat build/draft.log; : > build/draft_dir.txt.tmp; \
	  elif [ $$status -ne 0 ]; then cat build/draft.log; exit 1; fi
	mv build/draft_dir.txt.tmp build/draft_dir.txt
	@echo "draft: $$(cat build/draft_dir.txt)"

# Developers only: the default model's own greedy answers to the corpus's requests, in the shards still missing
# (draft/corpus/, committed; hours, on a processor whose native int8 is the tab's), and the shipped draft trained again
# from the committed shards (draft/shipped/, committed; README gives its time). The reader's build runs neither.
corpus: setup build/.dir
	$(PY) -m model_export --source default > build/model_dir.txt
	$(PY) -m draft.corpus --target "$$(cat build/model_dir.txt)"

draft: setup build/.dir
	$(PY) -m model_export --source default > build/model_dir.txt
	$(PY) -m draft --target "$$(cat build/model_dir.txt)" --retrain

# Instant navigation needs the site's own address in its sitemap: set SITE_URL to where it will be served.
site: build/.dir model
	ONEPASS_MODEL_DIR="$$(cat build/model_dir.txt)" ONEPASS_DRAFT_DIR="$$(cat build/draft_dir.txt)" ONEPASS_SITE_URL="$(SITE_URL)" \
	  $(PY) -m mkdocs build --strict --quiet

serve: site
	$(PY) tools/serve.py --dir site --port $(PORT)

# Both linters, which `check` and `test` run first (ruff.toml holds the rules and the one line length;
# eslint.config.js reads it), then the type check of the JavaScript against the contract's generated types
# (tsconfig.json; hooks/typecheck.py lays out the scripts with contract.js in build/types/ and runs tsc).
lint: setup
	$(PY) -m ruff check --quiet .
	npx --no-install eslint --quiet .
	$(PY) -m hooks.typecheck

# The quick loop (41–88 s warm, by processor): the linters, then the tests that need no Chromium, no real model and take
# no seconds each (pytest.ini's markers).
check: setup lint
	ONEPASS_SKIP_REAL=1 $(PY) -m pytest -q -m "not browser and not real and not slow"

# Every test, as CI runs it (.ci/run), after the linters. ONEPASS_SKIP_REAL=1 skips the real model's tests
# (tests/conftest.py), so the real model is not built either.
test: setup lint
	$(PY) -m model_export --source tiny
ifneq ($(ONEPASS_SKIP_REAL),1)
	$(PY) -m model_export --source default
endif
	$(PY) -m pytest --durations=15

bench: setup
	$(PY) -m benchmarks.bench_export --source "$(SOURCE)"

bench-browser: setup
	$(PY) -m benchmarks.bench_browser --source "$(SOURCE)" $$(test -s build/draft_dir.txt && echo --draft "$$(cat build/draft_dir.txt)")

# Every page at desktop and phone width, light and dark, into build/screenshots/ (tiny model unless ONEPASS_MODEL_DIR is set).
screenshots: setup build/.dir
	$(PY) -m tools.screenshots --out build/screenshots

build/.dir:
	mkdir -p build && touch $@

clean:
	rm -rf build site
