"""A length generalisation in words (dfst.results.wording): never "robust to 0 digits"."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dfst.protocol.ladder import max_passing
from dfst.results.wording import lg_cell, lg_words

lengths = st.lists(st.integers(1, 10**7), min_size=0, max_size=6, unique=True).map(sorted)


@given(lengths, st.data())
def test_an_lg_in_words_names_the_first_failing_length_never_zero_digits(digits, data):
    verdicts = data.draw(st.lists(st.booleans(), min_size=len(digits), max_size=len(digits)))
    levels = [{"digits": n, "robust": ok, "probabilistic": ok} for n, ok in zip(digits, verdicts)]
    lg = max_passing(levels, "robust")
    for text in (lg_words(lg, levels), lg_words(lg, levels, "probabilistic"), lg_cell(lg, levels)):
        assert "to 0" not in text and text != "0"
        if not levels:
            assert text == "not evaluated"
        elif lg == 0:  # the first tested length failed: the text says which it was
            assert f"{digits[0]:,}" in text and "fails at" in text
        else:
            assert f"{lg:,}" in text and "fails" not in text
    assert lg_words(None, levels) == "not evaluated"
