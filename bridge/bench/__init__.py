"""``python -m bridge.bench``: every figure a ratio against a reference measured in the same run."""
