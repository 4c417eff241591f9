"""``python -m onepass``: the lesson's command line (see cli.py)."""

from .cli import main

raise SystemExit(main())
