"""The interfaces: the library, the command line, consultations, MCP and the schemas.

- :mod:`.api`: ``advise()``, ``estimate()``, ``register_catalog()`` (the library);
- :mod:`.consultation`: a consultation turn by turn (:mod:`.saved_state`: its saved state checked); :mod:`.launch`, :mod:`.launch_plan`, :mod:`.launch_files`: launch files;
- :mod:`.cli` (the group), :mod:`.cli_options`, :mod:`.cli_output`, :mod:`.cli_ask`, :mod:`.cli_knowledge`,
  :mod:`.completion`, :mod:`.listing`: the ``expert`` command;
- :mod:`.mcp_server`: ``expert mcp``; :mod:`.schema`: JSON Schemas and tool definitions.
"""
