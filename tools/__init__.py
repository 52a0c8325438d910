"""The task runner's larger steps, a module each, imported by noxfile.py (bundle: the offline
install bundle of the `bundle` session; images: the engine, the local base and the builds of
the `image` session, and what a judge container needs)."""
