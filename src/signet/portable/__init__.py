"""Moving a memory store: a portable bundle (bundle.py: export and import), importers of other
tools' formats (importers.py: mem0's export, plain markdown folders) and the online backup."""
