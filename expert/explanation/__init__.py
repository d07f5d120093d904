"""The explanation: what a person reads, built from the engine's record of what fired.

- :mod:`.consult`: one consultation run and its :class:`~.result.Result` built (:func:`~.consult.build_result`);
- :mod:`.result`: the result as data (``to_dict()``, ``render()``); :mod:`.wording`: its words (:class:`~.wording.Writer`);
- :mod:`.explain`: :func:`~.explain.explain`; :mod:`.how`, :mod:`.why_not`, :mod:`.what_if`: HOW, WHY NOT and WHAT IF;
- :mod:`.templating`: the jinja2 environment of ``templates/``; :mod:`.render`: explanations and estimates rendered;
- :mod:`.chart`: "Time and cost" as bars or a table; :mod:`.rulebook`: the knowledge base rule by rule;
- :mod:`.sources`: where a sentence is written (each message's id and place).
"""
