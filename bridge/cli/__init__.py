"""The terminal commands (`bridge …`): ask, doctor, demo, token, pair, and their helpers."""
