"""Fakes of outside services that really speak their wire formats on loopback (never mocks),
and scripted_llm.py: the one in-process stand-in for the LLM seam that the pipeline's pure
functions take as an argument (extraction, decision, contradiction, hints, llm_json)."""
