"""The command line: the ``expert`` command, a thin layer over the library.

- :mod:`.main`: the group ``main`` (the console script) and advise, explain, estimate, schema, mcp, serve;
- :mod:`.options`: the options and how their values are read; :mod:`.output`: printing, errors, exit codes;
- :mod:`.ask`: ``expert ask``; :mod:`.knowledge`: ``expert models``, ``rules``, ``catalogs``, ``check``;
- :mod:`.completion`: shell completion of flag values; :mod:`.listing`: ``expert catalogs``' listing.
"""
