"""Links: carrying frames between bridge and the extension (relay, native host, tokens, trust)."""
