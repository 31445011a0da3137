"""The ``unicite`` console script and ``python -m unicite``: the command line, when installed."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Run the command line, or say in one line how to install it when its extra is missing."""
    try:
        from unicite.cli import main as run
    except ModuleNotFoundError as err:
        if err.name is None or err.name.partition(".")[0] == "unicite":
            raise
        sys.stderr.write(f"unicite: {err}\n")
        raise SystemExit(1) from None
    run()


if __name__ == "__main__":
    main()
