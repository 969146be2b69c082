"""The embedding projection: a 2-D or 3-D map of the memories' vectors (layout.py does the
math, service.py caches it in umap_cache and computes it off the request path)."""
