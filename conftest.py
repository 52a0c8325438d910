"""Settings shared by every package's test suite (pytest loads this file from the rootdir)."""

from hypothesis import settings

# Property tests assert what a function returns, never how fast: CI machines are shared and
# noisy (a 200 ms example deadline failed a checker property on a loaded 2-core machine).
settings.register_profile("codefu", deadline=None)
settings.load_profile("codefu")
