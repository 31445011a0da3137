"""Allow ``python -m unicite``."""

from unicite.cli import main

main()
