"""The interfaces: the library, the command line, consultations, MCP and the schemas.

- :mod:`.api`: ``advise()``, ``estimate()``, ``knowledge_base()`` (the library);
- :mod:`.consultation`: a consultation turn by turn; :mod:`.launch`, :mod:`.launch_files`: launch files;
- :mod:`.cli`, :mod:`.completion`, :mod:`.listing`: the ``expert`` command;
- :mod:`.mcp_server`: ``expert mcp``; :mod:`.schema`: JSON Schemas and tool definitions.
"""
