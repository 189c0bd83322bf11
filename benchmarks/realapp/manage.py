#!/usr/bin/env python
"""The benchmark's tiny Django app (a book library in the stock admin). Needs REALAPP_DB: the SQLite file."""

import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "realapp_site.settings")
    try:
        from django.core.management import execute_from_command_line
    except ImportError:
        sys.exit("The real-app benchmark needs Django: pip install django")
    execute_from_command_line(sys.argv)
