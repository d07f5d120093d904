"""Hostile round six: a demanding user's review (branch review7), each
finding held by the one input that showed it. Refusals only: no engine run."""

from __future__ import annotations

import pytest

from expert import InputError, advise


# On main a368f4a a number refused whole was quoted twice: "training examples: '1e400' is not a number that
# can be read safely ('1e400')"; the part in brackets is worth saying only when it is not the whole answer.
@pytest.mark.parametrize("lang, field, value, said", [
    ("en", "dataset_examples", "1e400", "training examples: '1e400' is not a number that can be read safely; write"),
    ("es", "deadline_h", "1e400", "plazo: «1e400» no es un número que se pueda leer con seguridad; escríbelo"),
    ("en", "dataset_examples", "10 1e400", "'10 1e400' is not a number that can be read safely ('1e400'); write"),
])
def test_a_number_refused_whole_is_quoted_once(lang: str, field: str, value: str, said: str) -> None:
    with pytest.raises(InputError) as error:
        advise(**{field: value}, lang=lang)
    assert error.value.field == field and said in str(error.value)
