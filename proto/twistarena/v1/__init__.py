"""Generated code of the twistarena.v1 contract (see proto/generate.py)."""
