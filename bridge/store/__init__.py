"""The store: bridge's files on disk (sessions, history, debug dumps), locked and atomic."""
