"""A fake of the official Claude browser extension's side of native messaging (fake.py)."""
