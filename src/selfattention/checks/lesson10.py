"""Checks for lesson 10 (cost and memory): the longest context whose attention weights fit a memory (Exercise 1),
one step of the online softmax (Exercise 2) and the merge of blocks summarised apart by their normalised outputs
and log-sum-exps (Exercise 3).

Each check's own inputs make every named mistake give a result different from the right answer and from every
other named mistake (``tests/test_mistakes_lesson10.py`` feeds each one). The online-softmax check drives the
learner's step function one block at a time and compares every intermediate state, so an answer must follow the
algorithm, not only reach the final output; its blocks include scores near 1000 and near -1000 and a block whose
maximum is below the running one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import ExerciseError, _fmt, check_array, check_value, passed, reference_softmax

__all__ = ["check_longest_context", "check_combine_blocks", "check_online_step"]


# ---------------------------------------------------------------- exercise 1: the longest context
BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}


def _longest(memory_bytes: int, batch: int, num_heads: int, num_layers: int, dtype: str, training: bool) -> int:
    held = num_layers if training else 1          # backward needs every layer's weights; inference frees them
    return math.isqrt(memory_bytes // (held * batch * num_heads * BYTES[dtype]))


# Each case: memory_bytes, batch, num_heads, num_layers, dtype, training. The first holds T = 1000 exactly; the
# batch, heads and layers are 3, 5, 7 there, so that dropping any one factor gives a different T.
_LONGEST_CASES = [
    (7 * 3 * 5 * 2 * 1000 ** 2, 3, 5, 7, "float16", True),       # exactly T = 1000
    (7 * 3 * 5 * 2 * 1000 ** 2 - 1, 3, 5, 7, "float16", True),   # one byte less: T = 999
    (80 * 10 ** 9, 2, 8, 12, "float32", False),                  # inference: one layer's weights at a time
    (80 * 10 ** 9, 4, 32, 6, "bfloat16", True),
    (24 * 2 ** 30, 1, 12, 24, "bfloat16", False),
]

NOT_WHOLE = "the answer is not a whole number of tokens: round the square root DOWN (math.floor, int(), or math.isqrt)."


def _longest_hints(memory_bytes: int, batch: int, num_heads: int, num_layers: int, dtype: str,
                   training: bool) -> dict[str, float]:
    case = (memory_bytes, batch, num_heads, num_layers, dtype, training)
    right = _longest(*case)
    held = num_layers if training else 1
    size = BYTES[dtype]
    per_T2 = held * batch * num_heads * size                      # bytes per unit of T^2
    root = lambda factor: math.isqrt(memory_bytes // factor)      # noqa: E731
    hints = {
        "the batch is missing: each of the batch's sequences holds its own T x T weights, so divide by batch "
        "too.": root(per_T2 // batch),
        "the heads are missing: each of the num_heads heads holds its own T x T weights, so divide by num_heads "
        "too.": root(per_T2 // num_heads),
        "the dtype's bits were used as bytes: float16 and bfloat16 are 16 BITS, 2 bytes per number; float32 is "
        "32 bits, 4 bytes.": root(per_T2 // size * size * 8),
        "the bytes per number are missing: T x T numbers take T * T * (bytes per number) bytes.":
            root(per_T2 // size),
        "the memory grows like T^2, not T: take the square root of the number of T^2 units that fit.":
            memory_bytes // per_T2,
        "the square root was taken before dividing: divide the memory by all the factors first, then take the "
        "square root.": math.isqrt(memory_bytes) // per_T2,
        "that counts three T x T arrays per head and layer (the scores, their exponentials and the weights, as "
        "section 1's NumPy peak held): the exercise counts the weights only, one T x T matrix per head and "
        "layer.": root(per_T2 * 3),
        "that counts only half the matrix (the causal mask's T(T+1)/2 allowed pairs): a layer that builds its "
        "weights in full holds all T x T of them, masked or not.":
            (math.isqrt(1 + 8 * (memory_bytes // per_T2)) - 1) // 2,
    }
    if training:
        hints["the layers are missing: in training the backward pass needs every layer's weights (section 3), "
              "so all num_layers layers' weights are held at once."] = root(per_T2 // num_layers)
    else:
        hints["in inference (training=False) a layer's weights are freed once its output is computed: only "
              "one layer's weights are held at a time, so num_layers does not count."] = root(per_T2 * num_layers)
    if size == 2:
        word = "bfloat16 is a 16-bit format too" if dtype == "bfloat16" else "float16 numbers are 16 bits"
        hints[f"{word}: 2 bytes per number, not float32's 4."] = root(per_T2 * 2)
    exact = math.sqrt(memory_bytes / per_T2)
    if exact != right:
        hints["the square root was rounded, not rounded down: the longest T that fits is the largest whole "
              "number at most sqrt(memory / (all the factors)); one more does not fit."] = \
            float(round(exact)) if round(exact) != right else math.ceil(exact)
    values = list(hints.values())                                 # a value two mistakes share names neither
    return {text: v for text, v in hints.items() if v != right and values.count(v) == 1}


TWO_ARRAYS = ("that counts two T x T arrays per head and layer (your T comes out the same for float32 too, so "
              "it is not the bytes per number): the exercise counts the weights only, one T x T matrix per head "
              "and layer.")
SWAPPED = ("training and inference are swapped: your T holds one layer's weights in training and every layer's "
           "in inference. In training the backward pass needs every layer's weights (section 3), so num_layers "
           "counts; in inference a layer's weights are freed once its output is computed, so only one counts.")


def _probe(longest_context: Callable[..., Any], case: tuple, got: Any) -> str | None:
    """Tell apart mistakes that give the same T on ``case`` by calling the learner's function on a variant."""
    memory_bytes, batch, num_heads, num_layers, dtype, training = case
    try:
        T = int(got)
    except (TypeError, ValueError, OverflowError):
        return None
    if T != got:
        return None

    def again(dt: str, tr: bool) -> Any:
        try:
            return longest_context(memory_bytes, batch, num_heads, num_layers, dt, tr)
        except Exception:
            return None

    held = num_layers if training else 1
    if BYTES[dtype] == 2 and T == math.isqrt(memory_bytes // (held * batch * num_heads * 4)):
        if again("float32", training) == math.isqrt(memory_bytes // (held * batch * num_heads * 8)):
            return TWO_ARRAYS
    if num_layers > 1 and T == math.isqrt(memory_bytes // ((1 if training else num_layers) * batch * num_heads
                                                           * BYTES[dtype])):
        if again(dtype, not training) == math.isqrt(
                memory_bytes // ((num_layers if training else 1) * batch * num_heads * BYTES[dtype])):
            return SWAPPED
    return None


def check_longest_context(longest_context: Callable[..., Any]) -> None:
    """Exercise 1: the largest T whose attention weights fit: held * batch * num_heads * T^2 * bytes <= memory,
    held = num_layers in training, 1 in inference; bytes = 2 for float16 and bfloat16, 4 for float32."""
    if longest_context is None or longest_context is Ellipsis or not callable(longest_context):
        raise ExerciseError("longest_context is not a function yet: write it in the answer cell above.")
    for case in _LONGEST_CASES:
        memory_bytes, batch, num_heads, num_layers, dtype, training = case
        what = (f"memory_bytes = {memory_bytes:,}, batch = {batch}, num_heads = {num_heads}, "
                f"num_layers = {num_layers}, dtype = {dtype!r}, training = {training}")
        try:
            got = longest_context(*case)
        except Exception as exc:
            raise ExerciseError(f"longest_context raised {type(exc).__name__} on {what}: {exc}") from None
        if isinstance(got, (float, np.floating)) and math.isfinite(got) and not float(got).is_integer():
            raise ExerciseError(f"longest_context({what}) = {float(got)!r} is not right yet: {NOT_WHOLE}")
        if isinstance(got, (int, float, np.integer, np.floating)) and got != _longest(*case):
            found = _probe(longest_context, case, got)
            if found:
                raise ExerciseError(f"longest_context({what}) = {int(got):,} is not right yet: {found}")
        try:
            check_value(got, _longest(*case), f"longest_context({what})", hints=_longest_hints(*case), rtol=0,
                        atol=1e-9)
        except ExerciseError as err:
            if not isinstance(got, (int, float, np.integer, np.floating)):
                raise
            T = float(got)
            if math.isfinite(T) and T.is_integer():                   # a whole T reads 10,210, not 1.021e+04
                name = f"longest_context({what})"
                err = ExerciseError(str(err).replace(f"{name} = {_fmt(T)}", f"{name} = {int(T):,}", 1))
            if "is not right yet" in str(err):
                raise err from None
            used = (num_layers if training else 1) * batch * num_heads * T * T * BYTES[dtype]
            raise ExerciseError(
                f"{err} Your T's weights take {used:,.0f} bytes, which "
                f"{'fit, but a longer T fits too' if used <= memory_bytes else 'do not fit'}.") from None
    passed("the weights' bytes are layers held x batch x heads x T^2 x bytes per number, with every layer held in "
           "training and one in inference; the longest T grows like the square root of the memory, rounded "
           "down, exact at the boundary. Block-wise kernels (section 3) do not hold the T x T weights.")


# ---------------------------------------------------------------- exercise 3: merging blocks by their L
def _block_summaries(scores: np.ndarray, values: np.ndarray, cuts: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Each block's normalised output z_b (n, d_v) and L_b = ln sum exp(scores of the block) (n,)."""
    outputs, lses = [], []
    for a, b in zip([0, *cuts], [*cuts, len(scores)], strict=True):
        s = scores[a:b]
        m = s.max()
        e = np.exp(s - m)
        outputs.append(e @ values[a:b] / e.sum())
        lses.append(m + np.log(e.sum()))
    return np.array(outputs), np.array(lses)


def _combine_cases() -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str]]:
    """(outputs, lses, all scores, all values, words): moderate scores, near 1000, near -1000, then far apart."""
    rng = np.random.default_rng(11)
    values = rng.normal(size=(12, 3))
    moderate = np.array([0.5, 1.0, -0.5, 0.2, 3.0, 2.5, 1.0, 2.8, 1.5, 0.0, 2.0, -1.0])
    cases = []
    for shift, words in ((0.0, "scores between -1 and 3"), (1000.0, "scores near 1000"),
                         (-1000.0, "scores near -1000")):
        scores = moderate + shift
        outputs, lses = _block_summaries(scores, values, [4, 9])
        cases.append((outputs, lses, scores, values, f"three blocks of 4, 5 and 3 keys, {words}"))
    scores = moderate + np.repeat([-1800.0, 500.0, 500.0], [4, 5, 3])   # the blocks' L differ by about 2300
    outputs, lses = _block_summaries(scores, values, [4, 9])
    cases.append((outputs, lses, scores, values,
                  "three blocks whose L differ by about 2300 (near -1800, 500, 500)"))
    return cases


def _combine_mistakes(outputs: np.ndarray, lses: np.ndarray) -> dict[str, np.ndarray]:
    return {
        "that averages the blocks' outputs equally: a block whose keys score higher holds more of the softmax's "
        "weight. Each z_b counts with its block's share of the whole softmax's denominator.":
            outputs.mean(axis=0),
        "that adds the blocks' outputs: each z_b is already an average (its weights sum to 1), so the blocks' "
        "weights must sum to 1 too.": outputs.sum(axis=0),
        "the blocks' weights exp(L_b) were not divided by their sum: each block's weight is its SHARE of the "
        "whole softmax's denominator, and the shares sum to 1.": np.exp(lses) @ outputs,
        "the blocks' weights exp(L_b) were divided by the number of blocks n: each block's weight is its share "
        "of the whole softmax's denominator, and n is not that denominator.":
            np.exp(lses) @ outputs / len(lses),
        "the blocks' weights exp(L_b - max L) are stable but not normalised: subtracting the largest L keeps "
        "them finite, and they must still be divided by their sum, the whole softmax's denominator.":
            np.exp(lses - lses.max()) @ outputs,
        "that weights the blocks by L_b itself: L_b is the logarithm of the block's sum of exponentials, so a "
        "share computed from L_b directly is not the block's share of the softmax's denominator.":
            lses @ outputs / lses.sum(),
        "the sign is flipped: a block whose keys score higher (larger L_b) must count more, not less.":
            np.exp(lses.min() - lses) @ outputs / np.exp(lses.min() - lses).sum(),
        "that keeps only the block with the largest L: every block holds part of the softmax's weight, and the "
        "others are not negligible here.": outputs[int(np.argmax(lses))],
    }


SPREAD = ("your result holds inf or NaN for {words}: exp(L_b - c) overflows when c is not the LARGEST L. "
          "Subtracting the smallest or the mean L works only while the L values are close; subtract max L, "
          "as the softmax does, or use np.logaddexp.")
OVER_UNDER = ("your result holds inf or NaN for {words}: exp(L_b) overflows near L = 1000 (and underflows to 0 "
              "near -1000, giving 0/0). Subtract the largest L before taking exp, as the softmax does, or use "
              "np.logaddexp.")


def check_combine_blocks(combine_blocks: Callable[[np.ndarray, np.ndarray], Any]) -> None:
    """Exercise 3: sum over blocks of exp(L_b - L) z_b, with L = ln sum over blocks of exp(L_b)."""
    if combine_blocks is None or combine_blocks is Ellipsis or not callable(combine_blocks):
        raise ExerciseError("combine_blocks is not a function yet: write it in the answer cell above.")
    for outputs, lses, scores, values, words in _combine_cases():
        try:
            with np.errstate(all="ignore"):
                got = combine_blocks(outputs.copy(), lses.copy())
        except Exception as exc:
            raise ExerciseError(f"combine_blocks raised {type(exc).__name__} on {words}: {exc}") from None
        if got is not None and got is not Ellipsis and not callable(got):
            arr = np.asarray(got.detach() if hasattr(got, "detach") else got, dtype=float)
            if arr.shape == (values.shape[1],) and not np.isfinite(arr).all() and np.ptp(lses) > 500:
                raise ExerciseError(SPREAD.format(words=words))
            if arr.shape == (values.shape[1],) and not np.isfinite(arr).all() and abs(lses).max() > 500:
                raise ExerciseError(OVER_UNDER.format(words=words))
        right = reference_softmax(scores) @ values
        with np.errstate(all="ignore"):
            mistakes = {why: wrong for why, wrong in _combine_mistakes(outputs, lses).items()
                        if np.isfinite(wrong).all()}
        check_array(got, right, f"combine_blocks on {words}", mistakes=mistakes)
    passed("each block counts with weight exp(L_b - L), L = ln of the sum of exp(L_b): a softmax over the "
           "blocks' L. The blocks' outputs merge into exactly softmax(scores) @ values, in any order, without "
           "the scores; this is how split-KV kernels combine their pieces.")


# ---------------------------------------------------------------- exercise 2: one step of the online softmax
State = tuple[float, float, np.ndarray]


def _step(state: State, scores: np.ndarray, values: np.ndarray, *, invert: bool = False, own_max: bool = False,
          rescale_l: bool = True, rescale_o: bool = True, block_max: bool = False, divided: bool = False,
          subtract: bool = True, forget_new: bool = False, old_ref: bool = False, l_twice: bool = False,
          divided_each: bool = False, rescale_new: bool = False) -> State:
    """The right step, or one of the known mistakes."""
    m, l, o = state
    if divided:  # the state holds the normalised output o / l; undo it first
        o = o * l
    m_new = float(scores.max()) if block_max else max(m, float(scores.max()))
    if own_max:  # each block's exp taken from the block's own maximum, added without rescaling
        p = np.exp(scores - scores.max())
        l_new, o_new = l + p.sum(), o + p @ values
        m_new = max(m, float(scores.max()))
    elif forget_new:  # the new block from its own maximum, the old sums rescaled, exp(m_B - m_new) forgotten
        m_new = max(m, float(scores.max()))
        p = np.exp(scores - scores.max())
        c = np.exp(m - m_new)
        l_new, o_new = l * c + p.sum(), o * c + p @ values
    elif rescale_new:  # the correction multiplies the new block's sums instead of the old ones
        c = np.exp(m - m_new)
        p = np.exp(scores - m_new)
        l_new, o_new = l + c * p.sum(), o + c * (p @ values)
    elif not subtract:
        p = np.exp(scores)
        l_new, o_new = l + p.sum(), o + p @ values
    else:
        c = np.exp(m_new - m) if invert else np.exp(m - m_new)
        p = np.exp(scores - (m if old_ref else m_new))
        l_new = (l * c * (c if l_twice else 1.0) if rescale_l else l) + p.sum()
        o_new = (o * c if rescale_o else o) + p @ values
    if divided or divided_each:
        o_new = o_new / l_new
    return m_new, l_new, o_new


MISTAKES: dict[str, dict[str, bool]] = {
    "the correction is inverted: when the maximum grows from m to m_new, what was summed so far must shrink, "
    "so multiply by exp(m - m_new) (at most 1), not exp(m_new - m).": {"invert": True},
    "each block's exponentials were taken from that block's own maximum and added without rescaling: terms "
    "from different blocks then use different reference points. Take every exp from the running maximum "
    "m_new, and rescale what was summed before by exp(m - m_new).": {"own_max": True},
    "the new block's terms were taken from the block's own maximum m_B and the old sums were rescaled, but "
    "the new block's sums were not: they too must be restated from m_new, times exp(m_B - m_new) (or take "
    "their exp from m_new directly).": {"forget_new": True},
    "neither l nor o was rescaled: the new block's exp was taken from m_new, but what was summed before was "
    "measured from the old maximum m. Multiply both l and o by exp(m - m_new) before adding the new block.":
        {"rescale_l": False, "rescale_o": False},
    "l was rescaled but o was not: multiply o by exp(m - m_new) as well.": {"rescale_o": False},
    "o was rescaled but l was not: multiply l by exp(m - m_new) as well.": {"rescale_l": False},
    "the new block's exponentials were taken from the old maximum m: the old sums were restated from m_new, "
    "but the new terms must be measured from m_new too, exp(score - m_new).": {"old_ref": True},
    "l was rescaled twice: multiply l by exp(m - m_new) once, as o, then add the new block's sum.":
        {"l_twice": True},
    "m became the new block's maximum, not the largest score so far: m_new = max(m, largest score of the "
    "block).": {"block_max": True},
    "o holds the normalised output (divided by l): in the state, o is the weighted sum of exponentials, not yet "
    "divided; the division comes once, at the very end.": {"divided": True},
    "o was divided by l at every step: o is then a normalised output, and the next step adds unnormalised terms "
    "p @ values to it. Keep o as the running weighted sum of exponentials and divide by l once, after the last "
    "block.": {"divided_each": True},
    "the correction multiplies the new block's sums instead of the old ones: exp(m - m_new) restates what was "
    "summed BEFORE (measured from the old maximum m) from m_new; the new block's terms, exp(score - m_new), "
    "already are. l_new = exp(m - m_new) * l + sum of p, and the same for o.": {"rescale_new": True},
    "the exponentials were taken of the raw scores: l and o are sums of exp(score - m), measured from the "
    "running maximum m, and on scores near 1000 np.exp(1000) overflows. Subtract m_new before np.exp.":
        {"subtract": False},
}
OVERFLOW = ("on scores near 1000 your state holds inf or NaN: np.exp(1000) overflows. Take every exp after "
            "subtracting the running maximum m_new, so that the largest term is exp(0) = 1.")
NOT_UPDATED = ("m was not updated: after a block, m must be the largest score seen so far, "
               "max(m, largest score of the block).")


def _blocks() -> list[tuple[State, list[tuple[np.ndarray, np.ndarray]]]]:
    """(starting state, blocks) sequences; the first starts from a state already holding two keys."""
    rng = np.random.default_rng(10)
    v = rng.normal(size=(12, 3))
    seen = np.array([0.5, 1.5])                                      # two keys summarised in the start state
    start = (1.5, float(np.exp(seen - 1.5).sum()), np.exp(seen - 1.5) @ v[:2])
    first = [(np.array([3.0, -1.0, 2.5]), v[2:5]), (np.array([0.0, 1.0]), v[5:7]),
             (np.array([4.0, 3.5, 0.5]), v[7:10])]
    empty: State = (-np.inf, 0.0, np.zeros(2))
    w = rng.normal(size=(9, 2))
    second = [(1000.0 + np.array([0.0, 2.0, 1.0]), w[:3]), (np.array([-1000.0, -999.0]), w[3:5]),
              (1001.0 + np.array([1.0, 0.5, 0.25, 3.0]), w[5:9])]
    near_low = [(-1000.0 + np.array([0.0, 1e-9, 3.0]), w[:3]), (-1000.0 + np.array([2.0, 1.0]), w[3:5])]
    return [(start, first), (empty, second), (empty, near_low)]


def _as_state(got: Any, d_v: int, where: str) -> State:
    if got is None or got is Ellipsis:
        raise ExerciseError(f"online_step returned None {where}: write your code in the answer cell above and "
                            "`return m_new, l_new, o_new`.")
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        raise ExerciseError(f"online_step returned a {type(got).__name__} {where}; expected a tuple of three: "
                            "(m, l, o), the running maximum, the running sum and the running output.")
    m, l, o = got
    try:
        m, l = float(np.asarray(m).item()), float(np.asarray(l).item())
    except (TypeError, ValueError):
        raise ExerciseError(f"m and l must be single numbers {where}; got {type(got[0]).__name__} and "
                            f"{type(got[1]).__name__} (did you keep one number per key instead of their sum?)"
                            ) from None
    o = np.asarray(o, dtype=float)
    if o.shape != (d_v,):
        raise ExerciseError(f"o has shape {o.shape} {where}; it should have shape ({d_v},): one weighted sum of "
                            "the value vectors (sum over the block's keys).")
    return m, l, o


# The prediction: from this state, a block whose maximum (2 - ln 2) is below the running m = 2.
LOW_STATE: State = (2.0, 1.5, np.array([0.5, -1.0]))
LOW_SCORES = np.array([2.0 - math.log(2.0), 2.0 - math.log(4.0)])
LOW_VALUES = np.array([[2.0, 0.0], [0.0, 4.0]])
_UNSET = object()


def _low_hints() -> dict[str, np.ndarray]:
    m, l, o = LOW_STATE
    own = np.exp(LOW_SCORES - LOW_SCORES.max())                  # [1, 0.5]: from the block's own maximum
    right = _step(LOW_STATE, LOW_SCORES, LOW_VALUES)
    moved = _step(LOW_STATE, LOW_SCORES, LOW_VALUES, block_max=True)
    return {
        "m became the block's maximum 2 - ln 2: m is the largest score seen so far, and the block's scores are "
        "all below 2, so m stays 2.": np.concatenate([[moved[0], moved[1]], moved[2]]),
        "the state did not change: the block's keys still add their terms exp(score - m) to l and "
        "exp(score - m) v_j to o, even though none of them beats the running maximum.":
            np.concatenate([[m, l], o]),
        "the new terms were taken from the block's own maximum (1 and 1/2): the state's sums are measured from "
        "m = 2, which does not change, so each new term is exp(score - 2) (1/2 and 1/4).":
            np.concatenate([[m, l + own.sum()], o + own @ LOW_VALUES]),
        "o was divided by l: in the state, o is the weighted sum of exponentials, not yet divided.":
            np.concatenate([[m, right[1]], right[2] / right[1]]),
        "the old l and o were rescaled as if the maximum had changed: with m_new = m the factor exp(m - m_new) "
        "is exp(0) = 1, so what was summed before stays as it is.":
            np.concatenate([[m, l * math.exp(LOW_SCORES.max() - m) + np.exp(LOW_SCORES - m).sum()],
                            o * math.exp(LOW_SCORES.max() - m) + np.exp(LOW_SCORES - m) @ LOW_VALUES]),
    }


def _check_prediction(predicted_state: Any) -> np.ndarray:
    """The predicted state after the low block, compared with the right one; returns the right one flat."""
    if predicted_state is None or predicted_state is Ellipsis:
        raise ExerciseError("predicted_state has no value yet: work out by hand the state (m, l, o) after the "
                            "block whose maximum is below m, and write it as a tuple of three.")
    try:
        m, l, o = predicted_state
        mine = np.concatenate([[float(m), float(l)], np.asarray(o, dtype=float).ravel()])
    except (TypeError, ValueError):
        raise ExerciseError("predicted_state should be a tuple (m, l, o): two numbers and o with 2 entries, "
                            f"but it is {predicted_state!r}.") from None
    right = _step(LOW_STATE, LOW_SCORES, LOW_VALUES)
    flat = np.concatenate([[right[0], right[1]], right[2]])
    if mine.shape != flat.shape:
        raise ExerciseError(f"predicted_state's o has {mine.size - 2} entries; it should have 2, like the "
                            "state's o = [0.5, -1]: one weighted sum of the 2-entry values.")
    try:
        check_array(mine, flat, "your predicted_state [m, l, *o]", mistakes=_low_hints(), atol=1e-3)
    except ExerciseError as err:
        if "differs from the right answer" in str(err) and abs(mine[0] - flat[0]) > 1e-3:
            raise ExerciseError(f"your predicted m = {mine[0]:.4g} is not right yet: m is the largest score seen "
                                "so far, max(m, the block's largest score).") from None
        raise ExerciseError(_in_words(str(err))) from None
    return flat


def check_online_step(online_step: Callable[[State, np.ndarray, np.ndarray], Any],
                      predicted_state: Any = _UNSET) -> None:
    """Exercise 2: the online softmax's update, one block at a time; every intermediate state is compared.
    With ``predicted_state``: first the state predicted by hand after a block whose maximum is below the
    running one, then online_step run on that block."""
    if predicted_state is not _UNSET:
        right = _check_prediction(predicted_state)
    if online_step is None or online_step is Ellipsis or not callable(online_step):
        raise ExerciseError("online_step is not a function yet: write it in the answer cell above.")
    if predicted_state is not _UNSET:
        try:
            got = online_step((LOW_STATE[0], LOW_STATE[1], LOW_STATE[2].copy()), LOW_SCORES.copy(),
                              LOW_VALUES.copy())
        except Exception as exc:
            raise ExerciseError(f"online_step raised {type(exc).__name__} on the block of your prediction: "
                                f"{exc}") from None
        m, l, o = _as_state(got, 2, "on the block of your prediction")
        print(f"Your prediction is right. online_step on that block: m = {m:.4g}, l = {l:.4g}, "
              f"o = {np.round(o, 4).tolist()} (predicted: m = {right[0]:.4g}, l = {right[1]:.4g}, "
              f"o = {np.round(right[2:], 4).tolist()}).")
    with np.errstate(all="ignore"):  # the known mistakes overflow on purpose
        _drive(online_step)
    passed("every intermediate state (m, l, o) is the running maximum, sum and weighted sum; after the last "
           "block, o / l is exactly softmax(scores) @ values, for scores near 1000 and -1000 too.")


def _in_words(message: str) -> str:
    """Name the entry of the flattened state [m, l, *o] a message points to: m, l, or o's component."""
    def name(match: re.Match[str]) -> str:
        k = int(match.group(1))
        return {0: "in m", 1: "in l"}.get(k, f"in o[{k - 2}]")
    return re.sub(r"at index \((\d+),\)", name, message)


def _drive(online_step: Callable[[State, np.ndarray, np.ndarray], Any]) -> None:
    for start, blocks in _blocks():
        state, right = start, start
        wrong = {why: start for why in MISTAKES}
        for number, (scores, values) in enumerate(blocks, 1):
            where = (f"after block {number} (scores {np.array2string(scores, precision=4)}, the state before it "
                     f"m = {state[0]:.6g}, l = {state[1]:.4g})")
            try:
                got = online_step((state[0], state[1], np.copy(state[2])), np.copy(scores), np.copy(values))
            except Exception as exc:
                raise ExerciseError(f"online_step raised {type(exc).__name__} {where}: {exc}") from None
            m, l, o = _as_state(got, values.shape[-1], where)
            right = _step(right, scores, values)
            wrong = {why: _step(s, scores, values, **MISTAKES[why]) for why, s in wrong.items()}
            mine = np.concatenate([[m, l], o])
            if not np.isfinite(mine).all():
                if max(abs(float(scores.max())), abs(m) if np.isfinite(m) else 0) > 500 and np.isfinite(m):
                    raise ExerciseError(f"your state is not right yet {where}: {OVERFLOW}")
                if m == state[0] and m < float(scores.max()):
                    raise ExerciseError(f"your state is not right yet {where}: {NOT_UPDATED}")
                if number == 1 and state[0] == -np.inf:
                    raise ExerciseError(
                        f"your state holds inf or NaN {where}: starting from m = -inf, the correction must be "
                        "exp(m - m_new) = exp(-inf) = 0 (nothing summed yet), not exp(m_new - m) = inf.")
            if m != right[0] and m == state[0]:
                raise ExerciseError(f"your state is not right yet {where}: {NOT_UPDATED}")
            reference = np.concatenate([[right[0], right[1]], right[2]])
            known = {why: np.concatenate([[s[0], s[1]], s[2]]) for why, s in wrong.items()}
            alike = [why for why, k in known.items() if k.shape == mine.shape and np.allclose(mine, k)]
            if len(alike) > 1 and number < len(blocks):   # two mistakes agree on this block: the next tells
                state = (m, l, o)
                continue
            try:
                check_array(mine, reference, f"your state [m, l, *o] {where}", mistakes=known)
            except ExerciseError as err:
                raise ExerciseError(_in_words(str(err))) from None
            state = (m, l, o)
        final = state[2] / state[1]
        scores = np.concatenate([b[0] for b in blocks])
        values = np.concatenate([b[1] for b in blocks])
        if start[1] == 0.0:  # a sequence that starts empty ends with the full softmax's weighted sum
            e = np.exp(scores - scores.max())
            check_array(final, e @ values / e.sum(), "o / l after the last block")
