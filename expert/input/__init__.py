"""The input: a person's answers read, validated and typed.

- :mod:`.values`: the one reader of values (numbers as people write them, durations, choices, argument names);
- :mod:`.freetext`: profile values recognised in free text;
- :mod:`.profile`: the answers validated and normalised into the profile fact;
- :mod:`.arguments`: the library's arguments checked before any reader takes them;
- :mod:`.profile_types`: the profile's types, generated from ``rules/profile.toml``; :mod:`.bounds` their metadata.
"""
