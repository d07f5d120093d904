"""The profile's types, generated from rules/profile.toml by
scripts/update_types.py: do not edit (tests/test_schema.py checks it).

Choices are Literals; numbers carry their bounds as ``Bounds`` metadata
(a number, or text as a person types it: ``"70B"``, ``"2 days"``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from .bounds import Bounds

__all__ = ['ModelSizeB', 'Method', 'Budget', 'RocmOk', 'DeadlineH', 'VramGb', 'DatasetExamples', 'TokensPerExample', 'Epochs', 'Purpose', 'Interruptible', 'Stack', 'Provider', 'FIELD_TYPES']

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
