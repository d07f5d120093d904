"""The explanation: what a person reads, built from the engine's record of what fired.

- :mod:`.result`: the answer to a consultation, its wording (:func:`~.result.build_result`);
- :mod:`.explain`: HOW, WHY NOT and WHAT IF (:func:`~.explain.explain`);
- :mod:`.templating`: the jinja2 environment of ``templates/``; :mod:`.render`: explanations and estimates rendered;
- :mod:`.chart`: "Time and cost" as bars or a table; :mod:`.rulebook`: the knowledge base rule by rule.
"""
