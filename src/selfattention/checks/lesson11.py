"""Checks for lesson 11 (a real transformer): what enters layer 0 (three embedding rows and a LayerNorm), the
sense of a held-out sentence by its nearest centroid, and the model's sentence embedding.

Each check's own inputs make every named mistake give a result different from the right answer and from every
other named mistake (``tests/test_mistakes_lesson11.py`` feeds each one): no two sizes coincide, the tables'
rows are random (so no two rows are confused), the vectors' lengths vary tenfold (so cosine, dot product and
distance disagree), and hard inputs are included (a token whose input vector is constant, so LayerNorm divides 0
by 0 without its eps; padding that holds huge values).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import ExerciseError, _learner_line, check_function, passed

__all__ = [
    "check_first_layer_input",
    "check_held_out_senses",
    "check_sentence_embedding",
]


def _result(fn: Callable[..., Any], case: tuple) -> np.ndarray | None:
    """The learner's ``fn`` on copies of ``case`` (so it cannot change the check's inputs), as a float array; None
    when it raises. NumPy's warnings (0/0 and the like) are silenced: the checks name their cause."""
    try:
        with np.errstate(all="ignore"):
            return np.asarray(fn(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in case]), dtype=float)
    except Exception:
        return None


def _layer_norm(h: np.ndarray, gamma: Any, beta: Any, eps: float, *, axis: int = -1, ddof: int = 0,
                use_eps: bool = True) -> np.ndarray:
    mean = h.mean(axis=axis, keepdims=True)
    var = h.var(axis=axis, keepdims=True, ddof=ddof)
    return gamma * (h - mean) / np.sqrt(var + eps if use_eps else var) + beta


# ---------------------------------------------------------------- exercise 1: what enters layer 0
def _first_input(ids: np.ndarray, word_table: np.ndarray, position_table: np.ndarray, type_table: np.ndarray,
                 gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-12, *, word: bool = True,
                 position: int | None = 0, token_type: int | None = 0, norm: bool = True, affine: bool = True,
                 axis: int = -1, ddof: int = 0, position_by_id: bool = False, centre: bool = True,
                 scale: bool = True, root: bool = True, eps_outside: bool = False) -> np.ndarray:
    ids = np.asarray(ids)
    T = len(ids)
    h = word_table[ids] if word else np.zeros((T, word_table.shape[1]))
    if position_by_id:
        h = h + position_table[ids]
    elif position is not None:
        h = h + position_table[position:position + T]
    if token_type is not None:
        h = h + type_table[token_type]
    if not norm:
        return h
    g, b = (gamma, beta) if affine else (1.0, 0.0)
    if not centre:                                               # RMSNorm: no mean subtracted
        return g * h / np.sqrt((h**2).mean(axis=axis, keepdims=True) + eps) + b
    if not scale:                                                # centred only, not divided by the std
        return g * (h - h.mean(axis=axis, keepdims=True)) + b
    if eps_outside:                                              # (h - mean) / (std + eps)
        c = h - h.mean(axis=axis, keepdims=True)
        return g * c / (np.sqrt(h.var(axis=axis, keepdims=True)) + eps) + b
    if not root:                                                 # divided by the variance, not its square root
        return g * (h - h.mean(axis=axis, keepdims=True)) / (h.var(axis=axis, keepdims=True) + eps) + b
    return _layer_norm(h, g, b, eps, axis=axis, ddof=ddof)


def _beta_only(case: tuple) -> np.ndarray:
    """The normalised sum plus beta, without gamma."""
    return _first_input(*case, affine=False) + case[5]


def _whole_norm(case: tuple) -> np.ndarray:
    """LayerNorm's formula with the mean and variance of the whole (T, d_model) array."""
    h = _first_input(*case, norm=False)
    return case[4] * (h - h.mean()) / np.sqrt(h.var() + case[6]) + case[5]


FIRST_EPS = ("the eps inside the square root is missing: a token whose summed vector is constant has variance "
             "0, and (h - mean) / sqrt(0) is 0/0. Divide by sqrt(var + eps).")


def _first_mistakes(case: tuple) -> dict[str, np.ndarray]:
    return {
        "the token-type embedding is missing: add type_table[0] to every token (a single sentence is all "
        "type 0).": _first_input(*case, token_type=None),
        "you added type_table[1]; every token of a single sentence has token type 0: add type_table[0].":
            _first_input(*case, token_type=1),
        "the position embedding is missing: the token at position t gets row t of position_table.":
            _first_input(*case, position=None),
        "the positions start at 1; they are counted from 0 ([CLS] is position 0): rows 0 to T-1 of "
        "position_table.": _first_input(*case, position=1),
        "the position rows were looked up by token id (position_table[ids]); the token at position t gets row "
        "t, whatever its id: position_table[:T], or position_table[np.arange(T)].":
            _first_input(*case, position_by_id=True),
        "the word embedding is missing: each token's own row, word_table[ids].":
            _first_input(*case, word=False),
        "the LayerNorm is missing: the sum of the three rows is normalised over each token's features, then "
        "scaled by gamma and shifted by beta.": _first_input(*case, norm=False),
        "gamma and beta are not applied: LayerNorm ends with gamma * normalised + beta.":
            _first_input(*case, affine=False),
        "gamma and beta are swapped: LayerNorm multiplies by gamma (the LayerNorm's weight) and then adds beta "
        "(its bias): gamma * normalised + beta.": _first_input(*case[:4], case[5], case[4], *case[6:]),
        "LayerNorm normalised over the tokens (axis 0); it normalises each token's vector over its features "
        "(axis=-1).": _first_input(*case, axis=0),
        "beta is missing: LayerNorm ends with gamma * normalised + beta (the LayerNorm's bias).":
            _first_input(*case) - case[5],
        "gamma is missing: LayerNorm multiplies the normalised vector by gamma (the LayerNorm's weight), then "
        "adds beta.": _beta_only(case),
        "the LayerNorm was applied to the word rows alone, before the position and token-type rows were added; "
        "it normalises their sum: LayerNorm(word_table[ids] + position rows + type_table[0]).":
            _layer_norm(case[1][case[0]], case[4], case[5], case[6]) + case[2][:len(case[0])] + case[3][0],
        "the position rows were added after the LayerNorm; it normalises the sum of all three rows: "
        "LayerNorm(word_table[ids] + position rows + type_table[0]).":
            _layer_norm(case[1][case[0]] + case[3][0], case[4], case[5], case[6]) + case[2][:len(case[0])],
        "the token-type row was added after the LayerNorm; it normalises the sum of all three rows: "
        "LayerNorm(word_table[ids] + position rows + type_table[0]).":
            _layer_norm(case[1][case[0]] + case[2][:len(case[0])], case[4], case[5], case[6]) + case[3][0],
        "the position rows are in reverse order: the token at position t gets row t, so rows 0 to T-1 in order, "
        "position_table[:T].": _first_input(case[0], case[1], case[2][:len(case[0])][::-1], *case[3:]),
        "the variance was taken from the word rows alone; LayerNorm's mean and variance are both those of the "
        "summed vector (word + position + token-type rows).": _word_variance(case),
        "type_table.sum(0) adds both token-type rows; every token of a single sentence has token type 0: add "
        "type_table[0] only.": _first_input(*case[:3], case[3].sum(0, keepdims=True), *case[4:]),
        "LayerNorm normalised over the whole (T, d_model) array at once; it normalises each token's vector over "
        "its own features (axis=-1, keepdims=True).": _whole_norm(case),
        "the variance was divided by d_model - 1 (ddof=1); LayerNorm uses the plain mean of squares (ddof=0).":
            _first_input(*case, ddof=1),
        "that is LayerNorm with eps = 1e-5, PyTorch's default (nn.LayerNorm, F.layer_norm): this model's eps is "
        "1e-12; use the eps argument.": _first_input(*case[:6], 1e-5),
        "that is RMSNorm (divided by the root mean square, no mean subtracted); LayerNorm first subtracts each "
        "token's mean, then divides by sqrt(var + eps).": _first_input(*case, centre=False),
        "the vector was centred (mean subtracted) but not divided by its standard deviation: LayerNorm divides "
        "by sqrt(var + eps).": _first_input(*case, scale=False),
        "eps was added to the standard deviation, (h - mean) / (std + eps); eps belongs inside the square root: "
        "divide by sqrt(var + eps), not std + eps.": _first_input(*case, eps_outside=True),
        "the centred vector was divided by the variance, var + eps, instead of the standard deviation, its "
        "square root: LayerNorm divides by sqrt(var + eps).": _first_input(*case, root=False),
        "type_table.mean(0) is the mean vector of both token-type rows; every token of a single sentence has "
        "token type 0: add the row type_table[0] itself.": _first_input(*case[:3], case[3].mean(0, keepdims=True),
                                                                         *case[4:]),
        "each table's rows were normalised before they were summed; LayerNorm comes once, after the sum: "
        "LayerNorm(word_table[ids] + position rows + type_table[0]).": _each_table_normed(case, affine_each=True),
        "each table's rows were normalised (mean and variance) before they were summed; the sum is normalised "
        "once: LayerNorm(word_table[ids] + position rows + type_table[0]).": _each_table_normed(case),
        "beta was added before the multiplication by gamma (gamma * (normalised + beta)); LayerNorm scales "
        "first, then shifts: gamma * normalised + beta.": case[4] * (_first_input(*case, affine=False) + case[5]),
        "the normalised vector was multiplied by beta instead of adding it; LayerNorm ends with gamma * "
        "normalised + beta.": _first_input(*case, affine=False) * case[4] * case[5],
    }


def _word_variance(case: tuple) -> np.ndarray:
    """The sum centred by its own mean but divided by the standard deviation of the word rows alone."""
    ids, word_table, position_table, type_table, gamma, beta, eps = case
    h = word_table[ids] + position_table[:len(ids)] + type_table[0]
    return gamma * (h - h.mean(-1, keepdims=True)) / np.sqrt(word_table[ids].var(-1, keepdims=True) + eps) + beta


def _each_table_normed(case: tuple, *, affine_each: bool = False) -> np.ndarray:
    """Each table's rows standardised on their own, then summed (and scaled and shifted once, or each time)."""
    ids, word_table, position_table, type_table, gamma, beta, eps = case
    T = len(ids)
    parts = [word_table[ids], position_table[:T], np.tile(type_table[0], (T, 1))]
    if affine_each:
        return sum(_layer_norm(h, gamma, beta, eps) for h in parts)
    return gamma * sum(_layer_norm(h, 1.0, 0.0, eps) for h in parts) + beta


def _first_cases() -> list[tuple]:
    rng = np.random.default_rng(110)
    cases = []
    for vocab, positions, d, ids in ((7, 6, 5, [0, 3, 5, 1]), (9, 8, 6, [0, 2, 7, 2, 4, 1])):
        tables = [np.round(64 * rng.normal(size=(n, d))) / 64 for n in (vocab, positions, 2)]  # exact sums
        gamma, beta = 1.0 + 0.5 * rng.normal(size=d), rng.normal(size=d)
        cases.append((np.array(ids), *tables, gamma, beta, 1e-12))
    # Hard input: token 2's three rows sum to a constant vector (multiples of 1/64 add exactly), so its variance
    # is exactly 0.
    ids, word_table, position_table, type_table, gamma, beta, eps = cases[1]
    word_table = word_table.copy()
    word_table[ids[2]] = 0.75 - position_table[2] - type_table[0]
    cases.append((ids, word_table, position_table, type_table, gamma, beta, eps))
    # A large eps, so that an answer which ignores its eps argument (a number of its own in the sqrt) gives a
    # visibly different result.
    cases.append((*cases[0][:6], EPS_CASE))
    return cases


EPS_CASE = 0.5
"""The eps of the check's last case: far from 1e-12, so an answer that ignores its eps argument is told apart."""


def _ignores_eps(first_layer_input: Callable[..., Any], cases: list[tuple]) -> bool:
    """Whether the answer is LayerNorm with an eps of its own: its result does not change with the eps argument,
    is close to the right one where eps is 1e-12 (relative error below 1e-2), yet is not PyTorch's 1e-5 (a
    mistake named on its own)."""
    small, large = _result(first_layer_input, cases[0]), _result(first_layer_input, cases[-1])
    want = _first_input(*cases[0])
    if small is None or large is None or small.shape != want.shape or large.shape != want.shape:
        return False
    if np.allclose(small, _first_input(*cases[0][:6], 1e-5), rtol=1e-5, atol=1e-8):
        return False
    return (np.allclose(small, large, rtol=1e-9, atol=1e-12)
            and np.abs(small - want).max() <= 1e-2 * np.abs(want).max()
            and not np.allclose(large, _first_input(*cases[-1]), rtol=1e-5, atol=1e-8))


def _near_miss(first_layer_input: Callable[..., Any], cases: list[tuple]) -> str:
    """For a result close to the right one (within 0.5% of its largest value), a sentence giving the size of
    the largest difference, so that two values printed alike are not read as equal; else ""."""
    for case in cases:
        got = _result(first_layer_input, case)
        if got is None:
            return ""
        want = _first_input(*case)
        if got.shape != want.shape or np.allclose(got, want, rtol=1e-5, atol=1e-8):
            continue
        diff = float(np.abs(got - want).max())
        if np.isfinite(diff) and diff < 5e-3 * float(np.abs(want).max()):
            return (f" Your values differ from the right ones by at most {diff:.3g} (4 digits may print them "
                    "alike): a small term differs, for example the eps inside the square root.")
        return ""
    return ""


def _nan_only_in_row(fn: Callable[..., Any], case: tuple, row: int) -> bool:
    got = _result(fn, case)
    return (got is not None and got.ndim == 2 and got.shape[0] > row and not np.isfinite(got[row]).all()
            and np.isfinite(np.delete(got, row, axis=0)).all())


def _shapes_of(exc: BaseException) -> set[tuple[int, ...]]:
    """The shapes a NumPy broadcasting error names, e.g. {(4, 5), (4,)}."""
    return {tuple(int(n) for n in m.replace(" ", "").split(",") if n)
            for m in re.findall(r"\(([0-9, ]*)\)", str(exc))}


def _first_broadcast_mistake(first_layer_input: Callable[..., Any], case: tuple) -> str | None:
    """The mistake behind a NumPy broadcasting error on ``case``, named from the two shapes it reports, or None."""
    T, d = len(case[0]), case[1].shape[1]
    try:
        with np.errstate(all="ignore"):
            first_layer_input(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in case])
    except ValueError as exc:
        shapes, where = _shapes_of(exc), _learner_line(exc)
        if shapes == {(T, d), (2, d)}:
            return (f"the whole type_table, shape (2, {d}), was added to the ({T}, {d}) sum{where}; every token "
                    "of a single sentence has token type 0: add type_table[0], one row.")
        if shapes == {(T, d), (T,)}:
            return (f"a mean or variance of shape ({T},), one number per token, met the ({T}, {d}) array{where}; "
                    "NumPy lines up the last axes, so keep the reduced axis: keepdims=True.")
    except Exception:
        return None
    return None


def check_first_layer_input(first_layer_input: Callable[..., Any]) -> None:
    """Exercise 1: LayerNorm(word_table[ids] + position_table[:T] + type_table[0]), (T, d_model)."""
    cases = _first_cases()
    if callable(first_layer_input) and _nan_only_in_row(first_layer_input, cases[2], 2):
        raise ExerciseError(f"the result of first_layer_input is not right yet: {FIRST_EPS}")
    if callable(first_layer_input):
        named = _first_broadcast_mistake(first_layer_input, cases[0])
        if named:
            raise ExerciseError(f"first_layer_input raised a broadcasting error: {named}")
        if _ignores_eps(first_layer_input, cases):
            raise ExerciseError(
                f"first_layer_input ignores its eps argument: called with eps={EPS_CASE} it returns what it returns "
                "with eps=1e-12, so it uses an eps of its own. Use the eps it is given: sqrt(var + eps).")
    try:
        check_function(
            first_layer_input, _first_input, cases, "first_layer_input", mistakes=_first_mistakes,
            describe=lambda c: (f"ids={c[0].tolist()}, tables of {c[1].shape[0]}, {c[2].shape[0]} and 2 rows, "
                                f"d_model={c[1].shape[1]}, eps={c[6]:g}"
                                + (", a token with variance 0" if c is cases[2] else "")),
        )
    except ExerciseError as err:
        text = str(err)
        if "differs from the right answer" not in text:
            raise
        raise ExerciseError(text + _near_miss(first_layer_input, cases)) from None
    passed("word row + position row (from 0) + token-type row 0, then LayerNorm over the features: "
           "hidden[0].")


# ---------------------------------------------------------------- exercise 2: held-out senses
def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _senses(vectors: np.ndarray, labels: np.ndarray, *, hold_out: bool = True, score: str = "cosine",
            centroid_of_units: bool = False, nearest: bool = True, median: bool = False,
            senses: tuple[int, ...] | None = None, shift: int = 0) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=float)
    labels = np.asarray(labels)
    senses = tuple(range(int(labels.max()) + 1)) if senses is None else senses
    out = np.empty(len(vectors), dtype=float)
    for i, v in enumerate(vectors):
        keep = np.arange(len(vectors)) != i + shift if hold_out else np.ones(len(vectors), dtype=bool)
        scores = []
        for c in senses:
            members = vectors[keep & (labels == c)]
            if score == "mean cosine":
                scores.append(float((_unit(members) @ _unit(v)).mean()))
                continue
            if score == "nearest one":
                scores.append(float((_unit(members) @ _unit(v)).max()))
                continue
            members = _unit(members) if centroid_of_units else members
            centre = np.median(members, axis=0) if median else members.mean(axis=0)
            if score == "cosine":
                scores.append(float(_unit(centre) @ _unit(v)))
            elif score == "dot":
                scores.append(float(centre @ v))
            else:                                           # "distance": the nearest is the smallest
                scores.append(-float(np.linalg.norm(centre - v)))
        out[i] = senses[int(np.argmax(scores) if nearest else np.argmin(scores))]
    return out


def _senses_mistakes(case: tuple) -> dict[str, np.ndarray]:
    vectors, labels = case
    return {
        "the sentence was not held out: its own vector is in its sense's centroid, so the test has seen "
        "it. Leave sentence i out of the centroids before comparing.": _senses(*case, hold_out=False),
        "that is the nearest centroid by Euclidean distance; the lesson's rule is the highest cosine "
        "with the centroid.": _senses(*case, score="distance"),
        "that compares dot products, which favour long vectors; the rule is the cosine (divide by both "
        "lengths).": _senses(*case, score="dot"),
        "that picks the centroid with the LOWEST cosine; predict the sense whose centroid has the highest.":
            _senses(*case, nearest=False),
        "that averages the cosines to each sense's sentences; the rule compares with the centroid, the "
        "mean of the sense's vectors, then takes one cosine.": _senses(*case, score="mean cosine"),
        "each vector was scaled to unit length before the mean; the centroid is the mean of the vectors "
        "themselves.": _senses(*case, centroid_of_units=True),
        "that takes the sense of the single most similar other sentence (1-nearest neighbour); the rule "
        "compares with each sense's centroid, the mean of its other vectors.": _senses(*case, score="nearest one"),
        "that centroid is the median of the vectors, feature by feature; the rule uses their mean.":
            _senses(*case, median=True),
        "held_out_senses returned the labels it was given; it must predict each sentence's sense from its "
        "cosines with the centroids of the other sentences (the labels only say which vectors make each "
        "centroid).": np.asarray(labels, dtype=float),
        **({f"only senses 0 and 1 were compared, but these labels hold {int(labels.max()) + 1} senses: loop over "
            "every sense in labels (np.unique(labels)), not a fixed (0, 1).": _senses(*case, senses=(0, 1))}
           if labels.max() > 1 else {}),
    }


def _senses_cases() -> list[tuple]:
    """Vectors whose lengths vary tenfold, placed so that every rule above (and the right one) gives a different
    list of predictions on each case: a wrong rule is never mistaken for another (seeds found by search)."""
    cases = []
    for seed, n, d, k in ((15, 9, 3, 2), (0, 10, 4, 3)):
        rng = np.random.default_rng(seed)
        labels = np.arange(n) % k
        centres = rng.normal(size=(k, d))
        vectors = (centres[labels] + 1.5 * rng.normal(size=(n, d))) * rng.uniform(0.3, 3.0, size=(n, 1))
        cases.append((vectors, labels))
    return cases


def _matches_on_every_case(held_out_senses: Callable[..., Any], wrong: Callable[..., Any]) -> bool:
    """Whether the answer gives ``wrong``'s predictions, and not the right ones, on every case."""
    for vectors, labels in _senses_cases():
        got = _result(held_out_senses, (vectors, labels))
        if got is None:
            return False
        want = wrong(vectors, labels)
        if got.shape != want.shape or not np.array_equal(got, want) or np.array_equal(got, _senses(vectors, labels)):
            return False
    return True


def check_held_out_senses(held_out_senses: Callable[..., Any]) -> None:
    """Exercise 2: for each vector, the label of the nearest centroid (cosine) of the OTHER vectors, (n,)."""
    if callable(held_out_senses):
        for shift in (-1, 1):
            if _matches_on_every_case(held_out_senses, lambda v, y, s=shift: _senses(v, y, shift=s)):
                raise ExerciseError(
                    f"the result of held_out_senses is not right yet: the sentence left out of the centroids is "
                    f"i {'-' if shift < 0 else '+'} 1, not i (an off-by-one in the hold-out), so sentence i's own "
                    "vector stays in its centroid. Leave out exactly sentence i: np.arange(n) != i.")
    check_function(
        held_out_senses, _senses, _senses_cases(), "held_out_senses", mistakes=_senses_mistakes,
        describe=lambda c: f"{len(c[0])} vectors of length {c[0].shape[1]}, labels {c[1].tolist()}",
    )
    passed("each sentence held out, then the sense of the centroid with the highest cosine.")


# ---------------------------------------------------------------- exercise 3: sentence embedding
def _mean_real(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    m = np.asarray(mask, dtype=float)[..., None]            # (B, T, 1)
    return (hidden * m).sum(axis=1) / m.sum(axis=1)


def _embedding(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return _unit(_mean_real(hidden, mask))


def _without_special(mask: np.ndarray, *, first: bool = True, last: bool = True) -> np.ndarray:
    """The mask with each sentence's first and/or last real token ([CLS], [SEP]) set to 0."""
    m = np.array(mask, dtype=float)
    for row in m:
        real = np.flatnonzero(row)
        row[[real[0]] * first + [real[-1]] * last] = 0.0
    return m


def _embedding_mistakes(case: tuple) -> dict[str, np.ndarray]:
    hidden, mask = case
    inner = np.array(mask, dtype=float)
    inner[:, 0] = inner[:, -1] = 0.0
    mean = _mean_real(hidden, mask)
    return {
        "the padding was averaged in: take the mean over the real tokens only (mask == 1).":
            _unit(hidden.mean(axis=1)),
        "the vectors are not unit length: divide each sentence's mean by its norm.": mean,
        "that divides by the sum of absolute values (the L1 norm); unit length means dividing by the "
        "Euclidean length, np.linalg.norm(..., axis=-1, keepdims=True).":
            mean / np.abs(mean).sum(axis=-1, keepdims=True),
        "that is the [CLS] vector; this model's sentence embedding is the mean over all real tokens.":
            _unit(hidden[:, 0]),
        "[CLS] and [SEP] were left out of the mean; they are real tokens (mask 1) and count.":
            _embedding(hidden, _without_special(mask)),
        "[CLS] and [SEP] were left out of the mean by cutting the first and last columns; they are real "
        "tokens (mask 1) and count (and in a padded sentence the last column is padding, not [SEP]).":
            _embedding(hidden, inner),
        "each token was normalised before the mean; average the raw vectors, then normalise once.":
            _embedding(_unit(hidden), mask),
        "each feature was normalised across the sentences (axis=0); each sentence's own vector is divided by "
        "its length: np.linalg.norm(mean, axis=-1, keepdims=True).": mean / np.linalg.norm(mean, axis=0,
                                                                                            keepdims=True),
        "the mean was divided by one length for the whole batch (np.linalg.norm without an axis gives the norm "
        "of the whole (B, d_model) array), so every sentence's vector is off by the same factor: give each "
        "sentence its own length, np.linalg.norm(mean, axis=-1, keepdims=True).": mean / np.linalg.norm(mean),
        "[SEP] was left out of the mean; it is a real token (mask 1), like [CLS], and counts.":
            _embedding(hidden, _without_special(mask, first=False)),
        "[CLS] was left out of the mean; it is a real token (mask 1), like [SEP], and counts.":
            _embedding(hidden, _without_special(mask, last=False)),
        "that is max pooling; this model averages (mean pooling).":
            _unit(np.where(np.asarray(mask)[..., None] > 0, hidden, -np.inf).max(axis=1)),
    }


def _embedding_cases() -> list[tuple]:
    rng = np.random.default_rng(72)
    h1 = rng.normal(size=(2, 5, 6))
    m1 = np.array([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
    h2 = rng.normal(size=(3, 6, 4)) + 0.5
    h2[0, 4:] = 1e6                                          # huge values in the padding
    m2 = np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0]])
    return [(h1, m1), (h2, m2)]


def _which_divisor(sentence_embedding: Callable[..., Any]) -> str:
    """Which per-sentence divisor lost its axis, told from the learner's result on a batch whose size equals
    d_model (3), where the division broadcasts without an error."""
    rng = np.random.default_rng(7)
    hidden = rng.normal(size=(3, 5, 3)) + 0.3
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [1, 1, 1, 1, 0]])
    m = mask[..., None].astype(float)
    total, count = (hidden * m).sum(axis=1), m[..., 0].sum(axis=1)
    mean = total / count[:, None]
    norm_lost = mean / np.linalg.norm(mean, axis=-1)                # the length divides column-wise
    count_lost = _unit(total / count)                               # the token count divides column-wise
    both = (total / count) / np.linalg.norm(total / count, axis=-1)
    norm_fix = "np.linalg.norm(mean, axis=-1, keepdims=True)"
    count_fix = "mask.sum(axis=1, keepdims=True), the real tokens per sentence"
    got = _result(sentence_embedding, (hidden, mask))
    if got is not None and got.shape == (3, 3):
        if np.allclose(got, norm_lost, atol=1e-6):
            return f"the length lost it: {norm_fix}."
        if np.allclose(got, count_lost, atol=1e-6):
            return f"the count of real tokens lost it: {count_fix}."
        if np.allclose(got, both, atol=1e-6):
            return f"both the count and the length lost it: {count_fix}, and {norm_fix}."
    return f"keepdims=True, e.g. {norm_fix} or {count_fix}."


def _broadcast_mistake(sentence_embedding: Callable[..., Any], case: tuple) -> str | None:
    """The mistake behind a NumPy broadcasting error on ``case``, named from the two shapes it reports, or None."""
    hidden, mask = case
    B, T, d = hidden.shape
    try:
        with np.errstate(all="ignore"):
            sentence_embedding(hidden.copy(), mask.copy())
    except ValueError as exc:
        shapes, where = _shapes_of(exc), _learner_line(exc)
        if shapes == {(B, d), (B,)}:
            which = _which_divisor(sentence_embedding)
            return (f"an array of shape ({B}, {d}), one vector per sentence, was divided by one of shape ({B},), "
                    f"one number per sentence{where}; NumPy lines up the last axes, so that number needs its own "
                    f"axis: {which}")
        if shapes == {(B, T, d), (B, T)}:
            return (f"hidden, of shape ({B}, {T}, {d}), was multiplied by the mask, of shape ({B}, {T}){where}; "
                    "NumPy lines up the last axes, so the mask needs a last axis of length 1 to scale each "
                    "token's whole vector: mask[..., None], of shape (B, T, 1).")
    except Exception:
        return None
    return None


def _batch_flattened(sentence_embedding: Callable[..., Any], case: tuple) -> bool:
    """Whether the answer returns ONE vector for the whole batch: the mean of every real token of every sentence
    (what hidden[mask.astype(bool)].mean(0) gives), at unit length or not."""
    hidden, mask = case
    got = _result(sentence_embedding, case)
    if got is None:
        return False
    pooled = hidden[np.asarray(mask) > 0].mean(axis=0)
    return got.shape == pooled.shape and any(np.allclose(got, v, atol=1e-6) for v in (pooled, _unit(pooled)))


def _row_factors(sentence_embedding: Callable[..., Any]) -> list[float] | None:
    """The factor of each row, if every row of the answer on the first case is a multiple (other than
    all 1) of the right row; else None."""
    hidden, mask = _embedding_cases()[0]
    got = _result(sentence_embedding, (hidden, mask))
    if got is None:
        return None
    want = _embedding(hidden, mask)
    if got.shape != want.shape or not np.isfinite(got).all():
        return None
    factors = (got * want).sum(axis=-1)                      # the right rows have length 1
    if np.isclose(factors, 0.0).any() or not np.allclose(got, factors[:, None] * want, rtol=1e-6, atol=1e-9):
        return None
    return None if np.allclose(factors, 1.0) else [float(c) for c in factors]


def _nan_rows(sentence_embedding: Callable[..., Any]) -> str | None:
    """A message naming the sentences whose vectors hold NaN or infinite values, and why if it can tell; or None."""
    for hidden, mask in _embedding_cases():
        got = _result(sentence_embedding, (hidden, mask))
        if got is None:
            return None
        if got.shape != (hidden.shape[0], hidden.shape[2]) or np.isfinite(got).all():
            continue
        bad = np.flatnonzero(~np.isfinite(got).all(axis=1))
        real = np.asarray(mask).sum(axis=1)
        pads = hidden.shape[1] - real
        rows = ", ".join(f"{int(b)} ({int(real[b])} real tokens, {int(pads[b])} padding)" for b in bad)
        start = (f"sentence_embedding gives NaN or infinite values in row(s) {rows}, on hidden of shape "
                 f"{hidden.shape}: ")
        with np.errstate(all="ignore"):
            inverted = _embedding(hidden, 1 - np.asarray(mask))
        good = np.setdiff1d(np.arange(len(got)), bad)
        if (set(bad.tolist()) == set(np.flatnonzero(pads == 0).tolist())
                and np.allclose(got[good], inverted[good], rtol=1e-6, atol=1e-9)):
            return start + ("the mask is inverted: you averaged the padding only (mask == 0), so a sentence with "
                            "no padding divides 0 by 0 tokens. Average the real tokens, where mask == 1.")
        return start + ("a division by 0: a count of 0 tokens or a vector of length 0 (0/0 is NaN). Count the real "
                        "tokens of each sentence (mask == 1) and divide each sentence's mean by its own length.")
    return None


def check_sentence_embedding(sentence_embedding: Callable[..., Any]) -> None:
    """Exercise 3: mean over the real tokens, then unit length; (B, T, d), (B, T) -> (B, d)."""
    if callable(sentence_embedding):
        for case in _embedding_cases():
            named = _broadcast_mistake(sentence_embedding, case)
            if named:
                raise ExerciseError(f"sentence_embedding raised a broadcasting error: {named}")
        hidden, mask = _embedding_cases()[0]
        try:
            with np.errstate(all="ignore"):
                shape = np.shape(sentence_embedding(hidden.copy(), mask.copy()))
        except Exception:
            shape = None
        if shape == hidden.shape[1:]:
            raise ExerciseError(
                f"sentence_embedding returned shape {shape}, one vector per token position: it averaged or summed "
                f"over axis 0, the {hidden.shape[0]} sentences. Average over axis 1, each sentence's tokens, to "
                f"get ({hidden.shape[0]}, {hidden.shape[2]}).")
        if _batch_flattened(sentence_embedding, _embedding_cases()[0]):
            raise ExerciseError(
                "sentence_embedding returned one vector for the whole batch: hidden[mask] with a boolean mask "
                "gathers the real tokens of ALL sentences into one (n, d_model) array, so its mean mixes the "
                "sentences. Keep the batch axis: weight hidden by mask[..., None], sum over axis=1 and divide by "
                "each sentence's count of real tokens (or loop over the sentences).")
    if callable(sentence_embedding):
        named = _nan_rows(sentence_embedding)
        if named:
            raise ExerciseError(named)
    try:
        check_function(
            sentence_embedding, _embedding, _embedding_cases(), "sentence_embedding",
            mistakes=_embedding_mistakes,
            describe=lambda c: (f"hidden of shape {c[0].shape} with {int(np.size(c[1]) - np.sum(c[1]))} "
                                "padding tokens"),
        )
    except ExerciseError as err:
        # Rows that are multiples of the right ones (the engine speaks of softmax there, or of a plain difference
        # when the factor is the same for every row) mean the direction is right and the scaling to length 1 is not.
        text = str(err)
        generic = "by a different factor each time" in text or "differs from the right answer" in text
        factors = _row_factors(sentence_embedding) if generic else None
        if factors is None:
            raise
        listed = ", ".join(f"{c:.3g}" for c in factors)
        if np.allclose(factors, -1.0):
            raise ExerciseError("each sentence's vector is the right one times -1: a minus sign flipped it; the "
                                "embedding is +mean / its length." + text[text.rfind(" (on "):]) from None
        if min(factors) < 0:
            raise ExerciseError(
                f"each sentence's vector is a multiple of the right one, by {listed}, some negative, so those point "
                "the opposite way: the mean was divided by something other than its length (a sum of its features "
                "can be negative). Divide each sentence's mean by its own Euclidean length, np.linalg.norm(mean, "
                "axis=-1, keepdims=True)." + text[text.rfind(" (on "):]) from None
        raise ExerciseError(
            "each sentence's vector is a multiple of the right one: the direction is right, but the scaling to "
            f"length 1 is missing or wrong (your rows are {listed} times the right ones): average the real tokens, "
            "then divide each sentence's mean by its own Euclidean length, np.linalg.norm(mean, axis=-1, "
            "keepdims=True)." + text[text.rfind(" (on "):]
        ) from None
    passed("mean over the real tokens ([CLS] and [SEP] included), then unit length: the model's own "
           "sentence embedding.")
