"""The real-app replay benchmark's Django app (the stock admin over a book library) and its tasks.

``manage.py``, ``realapp_site/`` and ``library/`` are the Django project; ``server.py`` runs it,
``catalog.py`` draws the task instances, ``tasks.py`` checks outcomes and ``policies.py`` holds the
demonstrator and the null policy. ``benchmarks/bench_realapp_replay.py`` drives them.
"""
