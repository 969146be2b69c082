"""The release version: pyproject reads it from here, `signet --version` and `/health` report it."""

__version__ = "0.2.0"
