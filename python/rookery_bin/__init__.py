"""Where a platform wheel of the ``rookery`` package puts the single executable (``rookery_bin/rookery``).

A pure wheel has this package empty; ``rookery.shipped_executable()`` then answers None.
"""
