# The two commands of the README: `make demo` and `make test`. Both set up .venv first.
VENV ?= .venv
PYTEST_ARGS ?= -n 2

.PHONY: setup setup-demo demo test bench clean

setup:
	./scripts/setup.sh

setup-demo:
	./scripts/setup.sh demo

DEMO_TASKS ?= click-button,enter-text,login-user,choose-list,copy-paste

demo: setup-demo
	$(VENV)/bin/webmem demo
	$(VENV)/bin/webmem bench miniwob --tasks $(DEMO_TASKS) --episodes 5

test: setup
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

bench: setup
	$(VENV)/bin/python benchmarks/bench_context.py

clean:
	rm -rf $(VENV) .pytest_cache build dist
