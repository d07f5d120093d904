"""Knowing the model: a name as a person writes it, a size, or a local
Hugging Face ``config.json``, resolved to the model's total and active
parameters and its architecture.

The table, the words that are not part of a name and the keys of a config
file are knowledge (``rules/models.toml``); this module only searches and
counts. Every place that accepts a model size (the ``--model-size`` flag, the
interactive question, ``advise()``, :class:`~expert.Consultation`) goes
through :func:`resolve`, so a name reads the same everywhere:

1. a number (``7``, ``"70"``, ``"1e3B"``) is a size in billions;
2. a name in the table (case, spaces, dashes, dots and the organisation
   ignored) is that model; so is a name with variant suffixes after it
   (``-Instruct``, ``-GGUF``, ``-1M``) whose stem is in the table;
3. another name with a size in it (``MyModel-13B``, ``Foo-30B-A3B``,
   ``Bar-8x7B``) is read by the pattern, and the answer says so;
4. anything else is an error that suggests the closest names.

A Hugging Face Hub id the table does not know (``openai/gpt-oss-20b``) is
read instead from the Hub by the input layer (:func:`read_hub`, through
``expert/knowledge/hub.py``), before any pattern.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..escape import one_line
from ..i18n import served
from . import KnowledgeBase, ModelDef, Unreadable, read_regular
from .records import name_key
from .source import N_

_NUMBER = r"(\d+(?:[.,]\d+)?)"
_TOKEN_SPLIT = re.compile(r"[\s_\-]+")
_HEAD = re.compile(r"^[a-z]{3,}")
# "Qwen3-30B-A3B": 30B in all, 3B active.
_ACTIVE = re.compile(_NUMBER + r"\s*b[\s_\-]*a" + _NUMBER + r"\s*b(?![a-z])", re.IGNORECASE)
# "Mixtral-8x7B": eight experts of a 7B model; at most 8 x 7B in all.
_EXPERTS = re.compile(r"(\d+)\s*x\s*" + _NUMBER + r"\s*b(?![a-z])", re.IGNORECASE)
_BILLIONS = re.compile(r"(?<![a-z0-9.])" + _NUMBER + r"\s*b(?![a-z])", re.IGNORECASE)
_MILLIONS = re.compile(r"(?<![a-z0-9.])" + _NUMBER + r"\s*m(?![a-z])", re.IGNORECASE)
_PLAIN = re.compile(r"^" + _NUMBER + r"\s*([bm])$", re.IGNORECASE)    # "70B", "350M": a size, not a name
_EXPONENT = re.compile(r"^(\d+(?:\.\d+)?e[+-]?\d+)\s*b?$", re.IGNORECASE)

READ_AS = ("number", "table", "pattern", "config", "hub")


@dataclass(frozen=True)
class Resolved:
    """What a model answer resolves to."""

    total_b: float                       # memory: every parameter, every expert
    active_b: float                      # compute: the parameters used per token
    read_as: str                         # number, table, pattern, config (a local file) or hub
    name: str | None = None              # the model as named (None for a bare number)
    model: ModelDef | None = None        # the table's row
    experts: int | None = None
    experts_per_token: int | None = None
    shape: dict[str, Any] | None = field(default=None, compare=False)   # the architecture, when known

    def profile_fields(self) -> dict[str, Any]:
        """The derived profile fields (expert/knowledge/conditions.py DERIVED_PROFILE_FIELDS)."""
        label = self.model.name if self.model else self.name
        return {"model_name": self.name, "model_id": self.model.id if self.model else None, "model_label": label,
                "model_read_as": self.read_as, "model_active_b": self.active_b, "model_experts": self.experts,
                "model_experts_per_token": self.experts_per_token}


def _float(text: str) -> float:
    if "_" in text:         # Python's float() reads "1_0" as 10; a person did not write ten
        raise ValueError(text)
    return float(text.replace(",", "."))


def count_params(shape: Mapping[str, Any]) -> tuple[float, float]:
    """Total and active parameters (in billions) an architecture holds: the
    attention (or DeepSeek's latent attention), the MLP or experts of every
    layer, the embeddings (and the output layer unless tied), and
    ``other_b`` (a vision encoder). Biases and norms are left out: under
    1 % of any model in the table."""
    h, layers, heads = shape["hidden"], shape["layers"], shape["heads"]
    head_dim = shape.get("head_dim") or h // heads
    mla = shape.get("mla")
    if mla:
        nope, rope, v = mla["qk_nope_head_dim"], mla["qk_rope_head_dim"], mla["v_head_dim"]
        q_rank = mla.get("q_lora_rank")
        query = h * q_rank + q_rank * heads * (nope + rope) if q_rank else h * heads * (nope + rope)
        attention = (query + h * (mla["kv_lora_rank"] + rope) + mla["kv_lora_rank"] * heads * (nope + v)
                     + heads * v * h)
    else:
        attention = 2 * h * heads * head_dim + 2 * h * shape["kv_heads"] * head_dim
    matrices = 3 if shape.get("gated", True) else 2
    dense = matrices * h * shape["ffn"]
    embeddings = shape["vocab"] * h * (1 if shape.get("tied") else 2)
    other = shape.get("other_b", 0.0) * 1e9
    experts = shape.get("experts")
    if not experts:
        total = layers * (attention + dense) + embeddings + other
        return total / 1e9, total / 1e9
    moe_layers = shape.get("moe_layers") or layers
    expert = matrices * h * shape["expert_ffn"]
    shared = shape.get("shared_experts") or 0
    common = layers * attention + (layers - moe_layers) * dense + moe_layers * h * experts + embeddings + other
    total = common + moe_layers * (experts + shared) * expert
    active = common + moe_layers * (shape["experts_per_token"] + shared) * expert
    return total / 1e9, active / 1e9


# --- names ---------------------------------------------------------------------


def _index(kb: KnowledgeBase) -> dict[str, ModelDef]:
    cached = kb.__dict__.get("_model_index")
    if cached is None:
        cached = {}
        for model in kb.models:
            for name in (model.id, model.name, *model.aliases):
                cached.setdefault(name_key(name), model)
        object.__setattr__(kb, "_model_index", cached)
    return cached


def _stems(kb: KnowledgeBase, text: str) -> list[str]:
    """The name, then the name without each trailing variant word in turn
    (and without a publisher's word in front)."""
    words = [w for w in _TOKEN_SPLIT.split(text.rsplit("/", 1)[-1].strip().casefold()) if w]
    names = kb.model_names
    if len(words) > 1 and words[0] in names["prefixes"]:
        words = words[1:]
    stems = ["".join(words)]
    kept = [w for w in words if w not in names["suffixes"]] or words[:1]
    while len(words) > 1 and words[-1] in names["suffixes"]:
        words = words[:-1]
        stems.append("".join(words))
    stems.append("".join(kept))   # "Mistral-7B-Instruct-v0.3": the variant word in the middle
    return [name_key(stem) for stem in stems]


def lookup(kb: KnowledgeBase, text: str) -> ModelDef | None:
    """The table's model for a name, or None."""
    index = _index(kb)
    if name_key(text) in index:
        return index[name_key(text)]
    return next((index[stem] for stem in _stems(kb, text) if stem in index), None)


def suggestions(kb: KnowledgeBase, text: str) -> list[str]:
    """The table's names closest to ``text``: those it begins, then the most similar."""
    import difflib  # (here: a name that is found does not pay for it)

    index = _index(kb)
    key = name_key(text)
    most = kb.model_names["suggestions"]
    found: list[str] = []
    if len(key) >= 3:
        found = [model.name for k, model in index.items() if k.startswith(key)]
    for stem in dict.fromkeys([key, *_stems(kb, text)]):
        found += [index[k].name for k in difflib.get_close_matches(stem, list(index), n=most, cutoff=0.6)]
    if not found:  # a misspelt family ("lama three"): the models whose name starts alike
        first = [w for w in _TOKEN_SPLIT.split(text.rsplit("/", 1)[-1].strip()) if w]
        head = _HEAD.match(name_key(first[0])) if first else None
        heads = {lead.group(0): k for k in index if (lead := _HEAD.match(k))}
        if head:
            for close in difflib.get_close_matches(head.group(0), list(heads), n=most, cutoff=0.75):
                found += [model.name for k, model in index.items() if k.startswith(close)]
    return list(dict.fromkeys(found))[:most]


def read_pattern(text: str) -> tuple[float, float, int | None] | None:
    """Total, active (billions) and experts read from a name's size, or None."""
    match = _ACTIVE.search(text)
    if match:
        total, active = _float(match.group(1)), _float(match.group(2))
        return total, min(active, total), None
    match = _EXPERTS.search(text)
    if match:
        experts, each = int(match.group(1)), _float(match.group(2))
        return experts * each, experts * each, experts or None
    # One size in the name, or none read: "7B or 13B", "Llama 3 8B or 70B" and
    # "70B with 8B draft" name two models, and the caller refuses them.
    for pattern, scale in ((_BILLIONS, 1), (_MILLIONS, 1000)):
        found = {_float(size) for size in pattern.findall(text)}
        if len(found) == 1:
            size = found.pop() / scale
            return size, size, None
        if found:
            return None
    return None


def from_model(model: ModelDef, named: str, read_as: str = "table") -> Resolved:
    return Resolved(model.params_b, model.active_b, read_as, named, model, model.experts, model.experts_per_token,
                    model.shape())


def resolve_name(kb: KnowledgeBase, value: Any) -> Resolved | None:
    """A size or a name resolved; None when it is neither (the caller says why)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        return Resolved(number, number, "number")
    if not isinstance(value, str):
        return None
    # What a terminal would show: escape sequences, control and format
    # characters are not part of a name (nor kept in the profile).
    text = one_line(value)
    try:
        number = _float(text)
        return Resolved(number, number, "number")
    except ValueError:
        pass
    plain = _PLAIN.match(text)
    if plain:
        number = _float(plain.group(1)) / (1000 if plain.group(2).lower() == "m" else 1)
        return Resolved(number, number, "number")
    exponent = _EXPONENT.match(text)  # "1e3B": the exponent belongs to the number
    if exponent:
        number = float(exponent.group(1))
        return Resolved(number, number, "number")
    model = lookup(kb, text)
    if model is not None:
        return from_model(model, text)
    read = read_pattern(" ".join(_TOKEN_SPLIT.split(_strip_suffixes(kb, text))))
    if read is None:
        return None
    total, active, experts = read
    return Resolved(total, active, "pattern", text, None, experts, None)


def _strip_suffixes(kb: KnowledgeBase, text: str) -> str:
    """The name without its trailing variant words ("-Instruct-1M")."""
    words = [w for w in _TOKEN_SPLIT.split(text.rsplit("/", 1)[-1].strip()) if w]
    while len(words) > 1 and words[-1].casefold() in kb.model_names["suffixes"]:
        words = words[:-1]
    return " ".join(words)


# --- a local config.json -------------------------------------------------------


def _config_error(message: str, **params: Any) -> InputError:
    """An error naming model_config; ``message`` is already translated."""
    return InputError("model_config", message % params)


def read_config(kb: KnowledgeBase, path: Any, tr: Any) -> Resolved:
    """The model of a local Hugging Face ``config.json``: its architecture,
    counted. The file is untrusted: a regular file of at most
    ``[config] max_bytes``, JSON with the fields of ``[config.keys]``, each a
    whole positive number where one is expected. Raises InputError naming
    ``model_config`` otherwise."""
    from ..escape import quoted

    spec = kb.model_config
    if isinstance(path, (str, Path)) and "\0" not in str(path) and len(str(path)) <= 4096:
        file = Path(path)
    else:
        raise _config_error(tr.gettext("model_config: '%(value)s' is not a file path."), value=quoted(repr(path)))
    shown = quoted(str(file))
    try:
        raw = read_regular(file, spec["max_bytes"])
    except Unreadable as error:
        if error.reason == "not-regular":
            raise _config_error(tr.gettext("model_config: '%(path)s' is not a regular file."), path=shown) from None
        if error.reason == "too-large":
            raise _config_error(tr.gettext("model_config: '%(path)s' is larger than %(most)s bytes; a config.json is "
                                           "a few kilobytes."), path=shown, most=tr.number(spec["max_bytes"], 0)) from None
        raise _config_error(tr.gettext("model_config: '%(path)s' does not exist or cannot be read."), path=shown) from None
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _config_error(tr.gettext("model_config: '%(path)s' is not a JSON file in UTF-8 of at most %(most)s bytes."),
                            path=shown, most=tr.number(spec["max_bytes"], 0)) from None
    if not isinstance(data, dict):
        raise _config_error(tr.gettext("model_config: '%(path)s' must hold a JSON object (a Hugging Face config.json)."),
                            path=shown)
    return config_model(kb, data, file, tr)


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def config_model(kb: KnowledgeBase, data: Mapping[str, Any], file: Path, tr: Any, hub_id: str | None = None) -> Resolved:
    """A Resolved from the fields of a parsed config.json (of the Hub's
    ``hub_id`` when given: read as ``hub``, named by that id)."""
    spec = kb.model_config
    keys: Mapping[str, list[str]] = spec["keys"]
    model_type = data.get("model_type") if isinstance(data.get("model_type"), str) else ""
    for nested in spec["nested"]:
        inner = data.get(nested)
        if isinstance(inner, dict):
            data = {**data, **inner}
            model_type = inner.get("model_type") if isinstance(inner.get("model_type"), str) else model_type

    def get(name: str, required: bool = False) -> int | None:
        for key in keys.get(name, []):
            if key in data and data[key] is not None:
                value = data[key]
                if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= 10**9:
                    raise _config_error(tr.gettext("model_config: '%(key)s' must be a whole number from 1 to "
                                        "1,000,000,000; the file has %(value)s."), key=key,
                                        value=_short(value))
                return value
        if required:
            raise _config_error(tr.gettext("model_config: the file has no '%(key)s'; a Hugging Face config.json of a "
                                "decoder (Llama, Mistral, Qwen, Gemma, Phi, DeepSeek, OLMo, Falcon, GPT-2) is "
                                "accepted."), key=keys.get(name, [name])[0])
        return None

    hidden, layers, heads = get("hidden", True), get("layers", True), get("heads", True)
    assert hidden and layers and heads
    kv_heads = get("kv_heads") or (1 if data.get("multi_query") is True else heads)
    ffn = get("ffn") or 4 * hidden
    shape: dict[str, Any] = {
        "hidden": hidden, "layers": layers, "heads": heads, "kv_heads": kv_heads,
        "head_dim": get("head_dim") or hidden // heads, "ffn": ffn, "vocab": get("vocab", True),
        "context": get("context") or 0, "gated": model_type not in spec["ungated_types"],
        "experts": None, "experts_per_token": None, "expert_ffn": None, "shared_experts": 0, "moe_layers": None,
        "mla": None, "other_b": 0.0,
    }
    tied_keys = [k for k in keys.get("tied", []) if isinstance(data.get(k), bool)]
    # Hugging Face ties the output layer to the embeddings unless the config says otherwise.
    shape["tied"] = data[tied_keys[0]] if tied_keys else True
    experts = get("experts")
    if experts and experts > 1:
        per_token = get("experts_per_token") or 1
        if per_token > experts:
            raise _config_error(tr.gettext("model_config: %(per)s experts per token is more than the %(all)s experts."),
                                per=per_token, all=experts)
        moe_layers = layers
        dense_first = data.get("first_k_dense_replace")
        step = data.get("interleave_moe_layer_step")
        if isinstance(dense_first, int) and not isinstance(dense_first, bool) and 0 <= dense_first < layers:
            moe_layers = layers - dense_first
        elif isinstance(step, int) and not isinstance(step, bool) and 1 <= step <= layers:
            moe_layers = layers // step
        shape.update(experts=experts, experts_per_token=per_token, expert_ffn=get("expert_ffn") or ffn,
                     shared_experts=(get("shared_experts") or 0) + (1 if model_type in spec["shared_expert_types"]
                                                                    else 0),
                     moe_layers=moe_layers)
    mla_keys = ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
    if isinstance(data.get("kv_lora_rank"), int):
        mla = {}
        for key in mla_keys:
            value = data.get(key)
            if key == "q_lora_rank" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= 10**6:
                raise _config_error(tr.gettext("model_config: '%(key)s' must be a whole number from 1 to 1,000,000; the "
                                    "file has %(value)s."), key=key, value=_short(value))
            mla[key] = value
        shape["mla"] = mla
    if heads % kv_heads or kv_heads > heads:
        raise _config_error(tr.gettext("model_config: %(kv)s key/value heads do not divide %(heads)s attention heads."),
                            kv=kv_heads, heads=heads)
    total, active = (round(n, 3) for n in count_params(shape))   # to the million, as model cards give them
    names = [data.get(k) for k in keys.get("name", [])]
    name = hub_id or next((n for n in names if isinstance(n, str) and 0 < len(n) <= 100), None) or file.parent.name \
        or file.name
    from ..escape import quoted
    name = quoted(name)
    shape.update(name=name, size_b=total, active_b=active)
    model = lookup(kb, name)
    experts_n = shape["experts"]
    return Resolved(total, active, "hub" if hub_id else "config", name, model if model and abs(model.params_b - total) <= 0.02 * total
                    else None, experts_n, shape["experts_per_token"], shape)


def _short(value: Any) -> str:
    from ..escape import quoted
    return quoted(json.dumps(value)[:40])


# --- a config.json on the Hugging Face Hub -------------------------------------

# What could not be read, by hub.HubUnreadable's reason; each says how else to give the model.
_HUB_MESSAGES = {
    "no-library": N_("%(label)s: '%(id)s' looks like a model's id on the Hugging Face Hub; reading it needs the "
                  "huggingface_hub package (pip install 'expert[hub]'). Or download its config.json and give it "
                  "(%(how_model_config_file)s), or give the size in billions (7, 70B)."),
    "offline": N_("%(label)s: the config.json of '%(id)s' is not in the Hugging Face cache and the Hub cannot be "
               "reached (offline mode, HF_HUB_OFFLINE, or no network). Read it once while online, give its "
               "config.json (%(how_model_config_file)s), or give the size in billions (7, 70B)."),
    "missing": N_("%(label)s: the Hugging Face Hub has no model '%(id)s', or it is private (set HF_TOKEN to a token "
               "that can read it). Check the id, give its config.json (%(how_model_config_file)s), or give the size in "
               "billions (7, 70B)."),
    "gated": N_("%(label)s: '%(id)s' is a gated model: reading its config.json needs the Hugging Face token of an "
             "account that has accepted its terms (set HF_TOKEN, or run hf auth login). Or give its config.json "
             "(%(how_model_config_file)s), or the size in billions (7, 70B)."),
    "no-config": N_("%(label)s: the Hub's '%(id)s' has no config.json (its weights may be in another format, such as "
                 "GGUF). Give the id of the model it was made from, its config.json (%(how_model_config_file)s), or the "
                 "size in billions (7, 70B)."),
    "too-large": N_("%(label)s: the config.json of '%(id)s' is larger than %(most)s bytes, so it was not read; a "
                 "config.json is a few kilobytes."),
    "unreachable": N_("%(label)s: the config.json of '%(id)s' could not be read from the Hugging Face Hub "
                   "(%(detail)s). Try again later, give its config.json (%(how_model_config_file)s), or give the size in "
                   "billions (7, 70B)."),
}

# The same, to whoever asks from away (an assistant calling tools over MCP, a visitor of the web page): no
# tool and no field takes a config.json, so none offers it; the cache and the token are the server's.
_HUB_MESSAGES_SERVED = {
    **_HUB_MESSAGES,
    "no-library": N_("%(label)s: '%(id)s' looks like a model's id on the Hugging Face Hub; reading it needs the "
                     "huggingface_hub package on the server (pip install 'expert[hub]'). Or give the size in "
                     "billions (7, 70B)."),
    "offline": N_("%(label)s: the config.json of '%(id)s' is not in the server's Hugging Face cache and the Hub "
                  "cannot be reached (offline mode, HF_HUB_OFFLINE, or no network). Give the size in billions "
                  "(7, 70B)."),
    "missing": N_("%(label)s: the Hugging Face Hub has no model '%(id)s', or it is private (the server's HF_TOKEN "
                  "cannot read it). Check the id, or give the size in billions (7, 70B)."),
    "gated": N_("%(label)s: '%(id)s' is a gated model: reading its config.json needs the Hugging Face token of an "
                "account that has accepted its terms, set on the server (HF_TOKEN). Or give the size in billions "
                "(7, 70B)."),
    "no-config": N_("%(label)s: the Hub's '%(id)s' has no config.json (its weights may be in another format, such "
                    "as GGUF). Give the id of the model it was made from, or the size in billions (7, 70B)."),
    "unreachable": N_("%(label)s: the config.json of '%(id)s' could not be read from the Hugging Face Hub "
                      "(%(detail)s). Try again later, or give the size in billions (7, 70B)."),
}


# Of these a size answers, and the launch files can still load the id once it is named to them
# (the CLI's --launch-model; labels.toml [how_*] launch_model): said, or `--launch` loses the model.
_HUB_LAUNCH_KEEPS = ("no-library", "offline", "missing", "gated", "unreachable")


def read_hub(kb: KnowledgeBase, repo_id: str, tr: Any) -> Resolved:
    """The model of ``repo_id`` (``org/name``) on the Hugging Face Hub: its
    ``config.json`` (expert/knowledge/hub.py) counted as a local one is.
    Raises InputError naming ``model_size_b`` when it cannot be read or counted."""
    from ..escape import quoted
    from .hub import HubUnreadable, read_config_bytes

    spec = kb.model_config
    label = tr.gettext(kb.fields["model_size_b"].label) if "model_size_b" in kb.fields else "model_size_b"
    shown = quoted(repo_id)
    try:
        raw = read_config_bytes(repo_id, spec["max_bytes"])
    except HubUnreadable as error:
        text = tr.gettext((_HUB_MESSAGES_SERVED if served() else _HUB_MESSAGES)[error.reason]) % {
            "label": label, "how_model_config_file": kb.how(tr, "model_config_file"), "id": shown, "most": tr.number(spec["max_bytes"], 0),
            "detail": quoted(one_line(error.detail)) or error.reason}
        if error.reason in _HUB_LAUNCH_KEEPS:
            text += " " + tr.gettext("With the size, the launch files still load '%(id)s' if you name it: "
                                     "%(how_launch_model)s.") % {"id": shown, "how_launch_model": kb.how(tr, "launch_model")}
        raise InputError("model_size_b", text) from None
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        raise InputError("model_size_b", tr.gettext(
            "%(label)s: the config.json of '%(id)s' on the Hugging Face Hub is not a JSON object in UTF-8.")
            % {"label": label, "id": shown})
    try:
        return config_model(kb, data, Path(CONFIG_NAME), tr, hub_id=repo_id)
    except InputError as error:       # a field of the file: said of the Hub's file, not of --model-config
        reason = str(error).split(": ", 1)[-1]
        raise InputError("model_size_b", tr.gettext(
            "%(label)s: the config.json of '%(id)s' on the Hugging Face Hub cannot be counted: %(reason)s")
            % {"label": label, "id": shown, "reason": reason}) from None


CONFIG_NAME = "config.json"
