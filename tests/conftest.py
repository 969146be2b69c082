"""Shared test set-up.

This file sits in tests/, which has no __init__.py, so pytest puts tests/ on sys.path: the
shared fakes import as `from fakes.llm_server import FakeLLMServer, Reply`.
"""
