"""The Trac replay benchmark's tickets and tasks (Trac itself is the real app, from PyPI: pip install trac).

``tests/trac_app.py`` runs Trac; ``catalog.py`` draws the tickets and the task instances, ``tasks.py``
checks outcomes and ``policies.py`` holds the demonstrator and the null policy.
``benchmarks/bench_trac_replay.py`` drives them.
"""
