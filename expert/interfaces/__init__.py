"""The interfaces: one room per way in, beside the library they all call.

- :mod:`.api`: ``advise()``, ``estimate()``, ``register_catalog()`` (the library);
- :mod:`.consultation`: a consultation turn by turn (:mod:`.provisional`: what a question's ``ask_if`` reads;
  :mod:`.saved_state`: its saved state checked); :mod:`.schema`: JSON Schemas and tool definitions;
- :mod:`.cli`: the ``expert`` command (the group in :mod:`.cli.main`, its options, output, commands,
  shell completion and listings);
- :mod:`.launch`: launch files (:func:`.launch.make.launch`, the plan, the files' text);
- :mod:`.mcp`: ``expert mcp``, the tools over MCP (:mod:`.mcp.server`);
- :mod:`.web`: ``expert serve``, the consultation as a web page and its JSON API (:mod:`.web.app`).
"""
