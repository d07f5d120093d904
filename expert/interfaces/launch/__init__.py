"""Launch files: one recommendation's recipe as the files that run it.

- :mod:`.make`: :func:`~.make.launch` and :func:`~.make.plan`, the recipe checked and translated;
- :mod:`.plan`: the :class:`~.plan.Plan`, the :class:`~.plan.LaunchFiles` and their writing, the launch table read;
- :mod:`.files`: each file's text (train.py, accelerate.yaml, ds_config.json, run_torchtune.sh, README.md).
"""
