"""The task runner's larger steps, a module each, imported by noxfile.py (bundle: the offline
install bundle of the `bundle` session)."""
