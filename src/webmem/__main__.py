"""``python -m webmem`` runs the command line."""

from .cli import main

main()
