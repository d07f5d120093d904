"""The inference: the rules run by experta over the facts, and the arithmetic they call.

- :mod:`.engine`: the knowledge base's rules compiled into one experta engine class, run: infer();
  :mod:`.facts`: the facts of working memory; :mod:`.actions`: what each rule does (its `then`), with
  the facts it reads and declares; :mod:`.patterns`: each rule's joins, patterns, test and salience;
  :mod:`.run`: the record of one consultation (provenance);
- :mod:`.sizing`: one configuration's memory, time and cost, as the configuration rules call it;
  :mod:`.requirement`: what the run needs, the own card and the cards an id names;
  :mod:`.time_model`: how long a configuration trains; :mod:`.calibration`: the time model against published runs;
- :mod:`.estimate`: the first-principles memory estimate; :mod:`.estimate_input`: its input read.
"""
