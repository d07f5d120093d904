"""The profile's types, generated from rules/profile.toml by
scripts/update_types.py: do not edit (tests/test_schema.py checks it).

Choices are Literals; numbers carry their bounds as ``Bounds`` metadata
(a number, or text as a person types it: ``"70B"``, ``"2 days"``).
"""

from __future__ import annotations

import sys
from typing import Annotated, Literal, TypedDict

from .bounds import Bounds

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # Python 3.10
    from typing_extensions import Unpack

__all__ = ['ModelSizeB', 'Method', 'Budget', 'RocmOk', 'DeadlineH', 'VramGb', 'DatasetExamples', 'TokensPerExample', 'Epochs', 'Purpose', 'Interruptible', 'Stack', 'Provider', 'FIELD_TYPES', 'ProfileArguments', 'Unpack']

ModelSizeB = Annotated[float | str, Bounds(min=0.01, max=2000, kind='size')]
Method = Literal['full', 'lora', 'qlora']
Budget = Literal['low', 'medium', 'high']
RocmOk = bool
DeadlineH = Annotated[float | str, Bounds(min=0.01666, max=8760, kind='hours')]
VramGb = Annotated[float | str, Bounds(min=1, max=1024, kind='number')]
DatasetExamples = Annotated[int | str, Bounds(min=1, max=1000000000, kind='integer')]
TokensPerExample = Annotated[int | str, Bounds(min=1, max=1048576, kind='integer')]
Epochs = Annotated[float | str, Bounds(min_exclusive=0, max=1000, kind='amount')]
Purpose = Literal['experiment', 'production']
Interruptible = bool
Stack = Literal['typical', 'tuned']
Provider = Literal['cheapest', 'akash', 'aws', 'digitalocean', 'google-cloud', 'lambda', 'nebius', 'runpod', 'verda']

# Each profile field's type, by field name.
FIELD_TYPES = {
    'model_size_b': ModelSizeB,
    'method': Method,
    'budget': Budget,
    'rocm_ok': RocmOk,
    'deadline_h': DeadlineH,
    'vram_gb': VramGb,
    'dataset_examples': DatasetExamples,
    'tokens_per_example': TokensPerExample,
    'epochs': Epochs,
    'purpose': Purpose,
    'interruptible': Interruptible,
    'stack': Stack,
    'provider': Provider,
}


class ProfileArguments(TypedDict, total=False):
    """The profile as keyword arguments, declared once: what advise(), explain()
    and Consultation() take (``**profile: Unpack[ProfileArguments]``), each
    field under its name, then under its other names (rules/vocabulary.toml
    [aliases.arguments]; ``model``, a parameter of advise() and explain(), aside).
    """

    model_size_b: ModelSizeB | None
    method: Method | None
    budget: Budget | None
    rocm_ok: RocmOk | None
    deadline_h: DeadlineH | None
    vram_gb: VramGb | None
    dataset_examples: DatasetExamples | None
    tokens_per_example: TokensPerExample | None
    epochs: Epochs | None
    purpose: Purpose | None
    interruptible: Interruptible | None
    stack: Stack | None
    provider: Provider | None

    # other names
    model_size: ModelSizeB | None
    model_name: ModelSizeB | None
    size: ModelSizeB | None
    params: ModelSizeB | None
    parameters: ModelSizeB | None
    modelo: ModelSizeB | None
    metodo: Method | None
    fine_tuning_method: Method | None
    presupuesto: Budget | None
    rocm: RocmOk | None
    amd: RocmOk | None
    deadline: DeadlineH | None
    deadline_hours: DeadlineH | None
    hours: DeadlineH | None
    plazo: DeadlineH | None
    vram: VramGb | None
    gpu: VramGb | None
    own_gpu: VramGb | None
    my_gpu: VramGb | None
    gpu_vram: VramGb | None
    vram_gb_own: VramGb | None
    dataset: DatasetExamples | None
    examples: DatasetExamples | None
    dataset_size: DatasetExamples | None
    ejemplos: DatasetExamples | None
    tokens: TokensPerExample | None
    seq_len_tokens: TokensPerExample | None
    tokens_example: TokensPerExample | None
    proposito: Purpose | None
    goal: Purpose | None
