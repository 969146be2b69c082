"""Connectors: outside sources kept in sync with the memory (folder.py: a folder of markdown,
text, HTML or PDF notes, such as an Obsidian vault)."""
