"""What a launch is made of: ``rules/launch.toml`` read (:func:`table`), one
recommendation's recipe as the launch files need it (:class:`Plan`), and the
files themselves (:class:`LaunchFiles`). :mod:`.make` makes the plan,
:mod:`.files` writes each file's text from it.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ... import paths
from ...errors import InputError, KnowledgeBaseError
from ...escape import quoted
from ...i18n import Localizer

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

LAUNCH_TOML = paths.RULES / "launch.toml"
# Keys a recommendation's recipe dict may carry (issues 20 and 21 add the
# last five); any other key is refused, not ignored.
RECIPE_KEYS = ("id", "strategy", "precision", "optimizer", "base_bits", "checkpointing", "offload",
               "micro_batch", "gradient_accumulation_steps", "global_batch", "optimizer_in_backward", "framework",
               "offload_params")


FRAMEWORKS = ("trl", "torchtune")
STACKS = ("typical", "tuned")
MAX_MODEL = 300
HF_REPO = re.compile(r"^https://huggingface\.co/([A-Za-z0-9][\w.-]*/[\w.-]+)/")
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
DS_JSON = "ds_config.json"
ACCELERATE_YAML = "accelerate.yaml"
TRAIN_PY = "train.py"
TORCHTUNE_SH = "run_torchtune.sh"
# Every file a launch may write: overwriting a directory (--force) removes
# those of them the new recipe does not write (a previous recipe's
# ds_config.json would otherwise sit beside files that do not use it), and
# never any other file.
LAUNCH_FILE_NAMES = ("README.md", "requirements.txt", TRAIN_PY, ACCELERATE_YAML, DS_JSON, TORCHTUNE_SH)


@dataclass(frozen=True)
class LaunchFiles:
    """The files of one recommendation, by name (relative to the directory)."""

    option: int
    framework: str          # "trl" or "torchtune"
    stack: str              # "typical" or "tuned"
    command: str            # the launch command, for a shell (values quoted)
    files: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"option": self.option, "framework": self.framework, "stack": self.stack, "command": self.command,
                "files": [{"name": name, "content": text} for name, text in self.files.items()]}

    def write(self, directory: str | Path, overwrite: bool = False, lang: str = "en") -> list[Path]:
        """Write the files into ``directory`` (made if missing). A directory
        that exists and is not empty is refused (:class:`NotEmpty`) unless
        ``overwrite``; then a file an earlier launch wrote there that this one
        does not write (:data:`LAUNCH_FILE_NAMES`) is removed, and nothing
        else is touched.

        Nothing is written through a link: ``directory`` itself may not be
        one, each file is written under a temporary name in the directory and
        renamed over its final name (a link of that name is replaced, its
        target left as it was), and only regular files are removed."""
        tr = Localizer(lang)
        if not isinstance(directory, (str, os.PathLike)) or not str(directory).strip():
            raise InputError("launch", tr.gettext("launch: give the directory to write the files into, as a path."))
        target = Path(directory)
        shown = {"path": quoted(str(target), 200)}
        try:
            if target.is_symlink():
                raise InputError("launch", tr.gettext(
                    "launch: '%(path)s' is a link; give the directory itself.") % shown)
            if target.exists() and not target.is_dir():
                raise InputError("launch", tr.gettext("launch: '%(path)s' exists and is not a directory.") % shown)
            if target.is_dir() and any(target.iterdir()) and not overwrite:
                raise NotEmpty(str(target), tr.gettext(
                    "launch: the directory '%(path)s' is not empty; choose an empty one, or overwrite its files "
                    "with overwrite=True.") % shown)
            target.mkdir(parents=True, exist_ok=True)
            return _write_into(target, self.files)
        except InputError:
            raise
        except (OSError, ValueError) as error:     # ValueError: a path the system cannot take (a NUL in it)
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            raise InputError("launch", tr.gettext("launch: cannot write into '%(path)s': %(reason)s.")
                             % {**shown, "reason": quoted(reason, 80)}) from None


class NotEmpty(InputError):
    """The launch directory exists and is not empty, and overwriting was not asked for
    (an interface says how to ask for it in its own words: ``--force`` on the command line)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__("launch", message)
        self.path = path


# Where the platform allows, every name is opened relative to the directory's
# own descriptor, opened without following a link: the directory cannot be
# swapped for a link between the check and the writing.
_AT_DIRECTORY = os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _write_into(target: Path, files: dict[str, str]) -> list[Path]:
    """Write ``files`` into the directory ``target`` without following a link:
    each under a temporary name of its own, then renamed into place."""
    folder = os.open(target, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW) if _AT_DIRECTORY else None

    def at(name: str) -> str:
        return name if folder is not None else str(target / name)

    try:
        for name in LAUNCH_FILE_NAMES:
            if name in files:
                continue
            try:
                found = os.stat(at(name), dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if stat.S_ISREG(found.st_mode):      # a previous recipe's file; a link or anything else is not ours
                os.unlink(at(name), dir_fd=folder)
        written = []
        for name, text in files.items():
            temporary = f".{name}.{secrets.token_hex(8)}.tmp"
            descriptor = os.open(at(temporary), os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666,
                                 dir_fd=folder)
            try:
                with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                    handle.write(text)
                    if name.endswith(".sh"):
                        if os.chmod in os.supports_fd:
                            os.chmod(handle.fileno(), 0o755)
                        else:  # pragma: no cover - Windows before Python 3.13
                            os.chmod(at(temporary), 0o755)
                os.replace(at(temporary), at(name), src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(at(temporary), dir_fd=folder)
                raise
            written.append(target / name)
        return written
    finally:
        if folder is not None:
            os.close(folder)


@lru_cache(maxsize=4)
def table(path: Path = LAUNCH_TOML) -> dict[str, Any]:
    """rules/launch.toml, with its shape checked (KnowledgeBaseError otherwise)."""
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise KnowledgeBaseError([(str(path), 0, "cannot be read: %(error)s", {"error": str(error)[:200]})]) from None
    problems = []
    for section, keys in (("versions", ("torch", "transformers", "peft", "trl", "accelerate", "datasets",
                                        "bitsandbytes", "deepspeed", "torchtune", "torchao")),
                          ("deepspeed", ("master_bytes",)),
                          ("fsdp", ("save_state_dict_type", "config", "precision_note")),
                          ("defaults", ("micro_batch", "gradient_accumulation_steps", "stack", "learning_rate_full",
                                        "learning_rate_lora", "lora_alpha_per_rank", "lora_dropout",
                                        "target_modules", "max_grad_norm"))):
        for key in keys:
            if key not in doc.get(section, {}):
                problems.append((str(path), 0, "[%(section)s] needs %(key)s", {"section": section, "key": key}))
    for section, needed in (("optimizer", ("trl", "torchtune", "deepspeed")),
                            ("precision", ("trl_flag", "full_dtype", "base_dtype", "compute_dtype", "accelerate",
                                           "deepspeed", "torchtune")),
                            ("base_bits", ("quantization",)),
                            ("strategy", ("backend", "stage", "offload_stage"))):
        entries = doc.get(section)
        if not isinstance(entries, dict) or not entries:
            problems.append((str(path), 0, "[%(section)s] needs entries", {"section": section, "key": ""}))
            continue
        for name, entry in entries.items():
            missing = [key for key in needed if not isinstance(entry, dict) or key not in entry]
            if missing:
                problems.append((str(path), 0, "[%(section)s] needs %(key)s",
                                 {"section": f"{section}.{name}", "key": ", ".join(missing)}))
    if problems:
        raise KnowledgeBaseError(problems)
    return doc


@dataclass(frozen=True)
class Plan:
    """One recommendation with every recipe value translated for the target libraries."""

    rank: int
    method: str
    framework: str
    stack: str
    recipe: dict[str, Any]
    optimizer: dict[str, Any]
    precision: dict[str, Any]
    base_bits: int
    quantization: dict[str, Any]
    strategy: dict[str, Any]
    devices: int
    micro_batch: int
    accumulation: int
    global_batch: int
    checkpointing: bool
    offload: bool
    in_backward: bool
    model: str | None       # what the files load: the given path or id, else the table's Hugging Face id
    model_id: str | None    # models.toml id of the profile's model
    model_repo: str | None  # its Hugging Face id (models.toml config address)
    model_label: str
    tokens_per_example: int
    epochs: float
    per_device_gib: float          # what each device needs (GiB, as the answer shows it)
    memory_gib: float              # the memory of one device as its driver reports it (per_device_gib is of it)
    host_ram_gib: float | None
    hours: float
    text: str
    lora_rank: int
    size_b: float = 0.0     # the profile's model size, billions of parameters
    # models of rules/launch.toml [torchtune.models]: id -> (name, billions of parameters), from models.toml
    tune_models: dict[str, tuple[str, float]] = field(default_factory=dict)
    # ranks of the answer's other options that the typical stack (TRL) writes
    trl_options: tuple[int, ...] = ()
    # the stack the answer's hours are on: the profile's, or the tuned one for a
    # recipe only torchtune runs (rules/recipes.toml, `stack`)
    hours_stack: str = "typical"
    # the weights in CPU memory too (recipes.toml offload_params): written as accelerate's FSDP with
    # fsdp_offload_params, the setup PEFT documents for QLoRA (DeepSpeed ZeRO-3 with QLoRA and CPU offload
    # takes more GPU memory than without it: peft docs/source/accelerate/deepspeed.md, Caveats)
    offload_params: bool = False


def refuse(tr: Localizer, field_name: str, value: Any, accepted: Any) -> InputError:
    accepted_text = tr.list([str(a) for a in accepted], style="or") if isinstance(accepted, (list, tuple)) else accepted
    return InputError(field_name, tr.gettext(
        "%(field)s: '%(value)s' cannot be written as launch files; accepted: %(accepted)s.")
        % {"field": field_name, "value": quoted(str(value), 60), "accepted": accepted_text})
