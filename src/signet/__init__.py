"""Signet: local-first long-term memory for AI agents.

One SQLite database the user owns; a daemon that remembers conversations, distils them into
facts, links them into a graph and recalls the right context. The map: docs/architecture.md.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
