"""Lesson 14's checks name each typical mistake, written as a learner would write it, and no other; two
different right answers pass; a shortcut that skips what an exercise teaches does not."""

from __future__ import annotations

import numpy as np
import pytest
from mistakes import hidden_test, hidden_test_passes, message, names_only, right_answer_passes

import selfattention as sa
from selfattention import checks

# ------------------------------------------------------------------------------- exercise 1
ROPE_PHRASES = {
    "sign": "the sine coefficient has the wrong sign", "adjacent": "paired as (2u, 2u + 1)",
    "zero_sine": "s is zero", "swapped": "return (c, s) in that order",
    "whole_dot": "not the dot product of the whole", "cross_plus": "the cross term has a plus sign",
    "c_minus": "c has a minus sign", "c_half": "c uses the first feature of each pair only",
    "s_twice": "s is twice the cross term", "c_twice": "c is twice the pair's dot product",
    "s_half": "s is half the cross term", "c_negative": "c has the wrong sign",
    "s_no_a2b1": "s uses the first feature of q's pair only",
    "s_no_a1b2": "s uses the second feature of q's pair only",
}


def _pairs(q, k, adjacent=False):
    d = len(q)
    if adjacent:
        return q[0::2], q[1::2], k[0::2], k[1::2]
    return q[: d // 2], q[d // 2:], k[: d // 2], k[d // 2:]


def rope_right(q, k):
    a1, a2, b1, b2 = _pairs(q, k)
    return a1 * b1 + a2 * b2, a1 * b2 - a2 * b1


def rope_right_matrices(q, k):
    """Another right answer: per pair, a^T R(phi) b = cos(phi) a.b + sin(phi) a^T J b with
    phi = -offset theta_i, read off from the 2 x 2 matrices, returned as a list."""
    d, c, s = len(q), [], []
    J = np.array([[0.0, -1.0], [1.0, 0.0]])                # R(phi) = cos(phi) I + sin(phi) J
    for i in range(d // 2):
        a, b = np.array([q[i], q[i + d // 2]]), np.array([k[i], k[i + d // 2]])
        c.append(a @ b)
        s.append(-(a @ J @ b))                               # sin(-x) = -sin(x)
    return [np.array(c), np.array(s)]


def _wrong(kind):
    def answer(q, k):
        c, s = rope_right(q, k)
        if kind == "sign":
            return c, -s
        if kind == "adjacent":
            a1, a2, b1, b2 = _pairs(q, k, adjacent=True)
            return a1 * b1 + a2 * b2, a1 * b2 - a2 * b1
        if kind == "zero_sine":
            return c, np.zeros_like(s)
        if kind == "swapped":
            return s, c
        if kind == "s_twice":                              # the cross term counted for q's turn and k's
            return c, 2 * s
        if kind == "c_twice":
            return 2 * c, s
        if kind == "s_half":
            return c, s / 2
        if kind == "c_negative":
            return -c, s
        a1, a2, b1, b2 = _pairs(q, k)
        if kind == "s_no_a2b1":
            return c, a1 * b2
        if kind == "s_no_a1b2":
            return c, -a2 * b1
        if kind == "cross_plus":
            return a1 * b1 + a2 * b2, a1 * b2 + a2 * b1
        if kind == "c_minus":
            return a1 * b1 - a2 * b2, a1 * b2 - a2 * b1
        if kind == "c_half":
            return a1 * b1, a1 * b2 - a2 * b1
        return np.full_like(c, q @ k), s                   # whole_dot
    return answer


ROPE_WRONG = {kind: _wrong(kind) for kind in ROPE_PHRASES}


def rope_right_polar(q, k):
    """Another right answer: each pair in polar form, conj(a) b = |a| |b| e^{i (angle b - angle a)}; its
    cosine and sine take angles read off q and k, no rotation by an offset."""
    a1, a2, b1, b2 = _pairs(q, k)
    ra, rb = np.hypot(a1, a2), np.hypot(b1, b2)
    pa, pb = np.arctan2(a2, a1), np.arctan2(b2, b1)
    return ra * rb * np.cos(pb - pa), ra * rb * np.sin(pb - pa)


@pytest.mark.parametrize("answer", [rope_right, rope_right_matrices, rope_right_polar])
def test_rope_right_answers_pass(answer, capsys):
    right_answer_passes(checks.check_rope_coefficients, answer, capsys)


@pytest.mark.parametrize("answer", [rope_right, rope_right_matrices, rope_right_polar])
def test_rope_right_answers_pass_the_hidden_test(answer):
    assert hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=answer)


@pytest.mark.parametrize("key", list(ROPE_WRONG))
def test_rope_mistake_is_named(key):
    names_only(message(checks.check_rope_coefficients, ROPE_WRONG[key]), key, ROPE_PHRASES)
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=ROPE_WRONG[key])


def test_rope_q_and_k_swapped_is_named_as_either_cause():
    """Swapping q and k leaves c and flips s, exactly as the offset j - i does: the message names both."""
    def swapped(q, k):
        return rope_right(k, q)

    text = message(checks.check_rope_coefficients, swapped)
    names_only(text, "sign", ROPE_PHRASES)
    assert "q and k were swapped" in text and "j - i" in text
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=swapped)


def test_rope_returning_c_alone_is_named():
    def only_c(q, k):
        return rope_right(q, k)[0]

    assert "both coefficients are needed" in message(checks.check_rope_coefficients, only_c)
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=only_c)


def test_rope_halved_c_is_named():
    def halved(q, k):
        c, s = rope_right(q, k)
        return c / 2, s

    assert "c is half the pair's dot product" in message(checks.check_rope_coefficients, halved)
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=halved)


def rope(x, positions, base=1e4):
    """The lesson's own rotation, as a learner's notebook defines it in section 1."""
    d = x.shape[-1]
    angle = positions[:, None] * base ** (-np.arange(0, d, 2) / d)
    x1, x2 = x[:, : d // 2], x[:, d // 2:]
    return np.concatenate([x1 * np.cos(angle) - x2 * np.sin(angle), x1 * np.sin(angle) + x2 * np.cos(angle)],
                          axis=-1)


def test_pasting_the_rotation_under_another_name_is_refused():
    """The lesson's rotation pasted as `turn` calls a cosine and a sine: refused by check and hidden test."""
    import types

    turn = types.FunctionType(rope.__code__, rope.__globals__, "turn", rope.__defaults__)

    def rotated_scores(q, k):
        return turn(q[None], np.array([3.0])) @ turn(k[None], np.array([0.0])).T, np.zeros(len(q) // 2)
    assert "rotates q and k" in message(checks.check_rope_coefficients, rotated_scores)
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=rotated_scores)


def test_reading_the_coefficients_off_a_turned_query_is_refused():
    """The shortcut: turn q by 0 and by a quarter turn inline and read c and s off the scores."""
    def read_off(q, k):
        h = len(q) // 2
        a1, a2, b1, b2 = q[:h], q[h:], k[:h], k[h:]
        c = a1 * b1 + a2 * b2
        phi = np.pi / 2                                     # sin(-phi) = -1 picks out the sine coefficient
        s = -((a1 * np.cos(-phi) - a2 * np.sin(-phi)) * b1 + (a1 * np.sin(-phi) + a2 * np.cos(-phi)) * b2)
        return c, s
    for key, value in zip(("c", "s"), read_off(*np.random.default_rng(0).normal(size=(2, 8))), strict=True):
        assert np.allclose(value, rope_right(*np.random.default_rng(0).normal(size=(2, 8)))[key == "s"])
    assert "rotates q and k" in message(checks.check_rope_coefficients, read_off)
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=read_off)


def test_calling_rope_or_the_package_is_refused():
    import torch

    def via_rope(q, k):
        d = len(q)
        both = rope(q[None], np.array([0.0]))[0] * k
        return both[: d // 2] + both[d // 2:], np.zeros(d // 2)

    def via_rotary(q, k):
        qt = sa.llm.rotary(torch.tensor(q)[None], torch.tensor([0.0]))[0].numpy()
        return rope_right(qt, k)
    assert "rotates q and k" in message(checks.check_rope_coefficients, via_rope)
    assert "rotates q and k" in message(checks.check_rope_coefficients, via_rotary)
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=via_rotary)


def test_rotary_reached_through_getattr_is_refused():
    """The package's rotation fetched by a name built at run time: no name to read, but it runs."""
    import torch

    def via_getattr(q, k):
        turn = getattr(sa.llm, "rot" + "ary")
        return rope_right(turn(torch.tensor(q)[None], torch.tensor([0.0]))[0].numpy(), k)
    assert "rotates q and k" in message(checks.check_rope_coefficients, via_getattr)
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=via_getattr)


def test_rope_stacked_into_one_array_fails_check_and_hidden_test():
    """np.stack([c, s]) holds the right numbers in one (2, d/2) array: the task asks for the tuple (c, s)."""
    def stacked(q, k):
        return np.stack(rope_right(q, k))
    assert "as np.stack([c, s]) makes" in message(checks.check_rope_coefficients, stacked)
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=stacked)


def test_rope_zipped_pairs_are_named_a_layout_error():
    """list(zip(c, s)) gives one (c_i, s_i) per pair: the message names the layout, not a wrong value."""
    def zipped(q, k):
        return list(zip(*rope_right(q, k), strict=True))
    msg = message(checks.check_rope_coefficients, zipped)
    assert "as list(zip(c, s)) does" in msg and "the layout is not" in msg
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=zipped)


def test_a_cosine_imported_under_another_name_is_refused():
    """`from numpy import cos as c_`: the check looks at the objects used, not only at their names."""
    import types

    code = """
def turned(q, k):
    d = len(q)
    h = d // 2
    a1, a2, b1, b2 = q[:h], q[h:], k[:h], k[h:]
    phi = -np.pi / 2
    s = -((a1 * c_(phi) - a2 * s_(phi)) * b1 + (a1 * s_(phi) + a2 * c_(phi)) * b2)
    return a1 * b1 + a2 * b2, s
"""
    scope = {"np": np, "__name__": "__main__"}
    exec("from numpy import cos as c_, sin as s_\n" + code, scope)   # noqa: S102  (a learner's cell)
    turned = scope["turned"]
    assert isinstance(turned, types.FunctionType)
    assert "rotates q and k" in message(checks.check_rope_coefficients, turned)
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=turned)


# ------------------------------------------------------------------------------- exercise 2
BUDGET_PHRASES = {
    "charged_T": "each global layer was charged all T tokens",
    "no_local": "the local layers' caches were left out",
    "uncapped": "never holds more tokens than the text",
    "over_layers": "more global layers than the model has",
    "ceil": "rounded up", "fraction": "not a whole number of layers", "strict": "not < budget",
    "no_baseline": "all-local model's cache was not taken", "local_count": "the number of local layers",
    "window_minus_one": "charged window - 1 tokens",
}


def budget_right(T, layers, window, budget):
    local = min(T, window)
    if T <= window:
        return layers
    return min(layers, (budget - layers * local) // (T - local))


def budget_right_loop(T, layers, window, budget):
    """Add global layers one at a time while the caches still fit: the lesson's rule, no formula."""
    g = 0
    while g < layers and (g + 1) * T + (layers - g - 1) * min(T, window) <= budget:
        g += 1
    return g


def _spare(T, L, w, b):
    return b - L * min(T, w)


BUDGET_WRONG = {
    "charged_T": lambda T, L, w, b: min(L, _spare(T, L, w, b) // T),
    "no_local": lambda T, L, w, b: min(L, b // T),
    "uncapped": lambda T, L, w, b: min(L, (b - L * w) // (T - w)),
    "over_layers": lambda T, L, w, b: _spare(T, L, w, b) // (T - min(T, w)) if T > w else L,
    "ceil": lambda T, L, w, b: min(L, -(-_spare(T, L, w, b) // (T - min(T, w)))) if T > w else L,
    "fraction": lambda T, L, w, b: min(L, _spare(T, L, w, b) / (T - min(T, w))) if T > w else L,
    "strict": lambda T, L, w, b: max(g for g in range(L + 1) if g * T + (L - g) * min(T, w) < b),
    "no_baseline": lambda T, L, w, b: min(L, b // (T - min(T, w))) if T > w else L,
    "local_count": lambda T, L, w, b: L - budget_right(T, L, w, b),
    # "between steps a generating model keeps the last w - 1 keys": a local layer charged w - 1, not w
    "window_minus_one": lambda T, L, w, b: (min(L, (b - L * min(T, w - 1)) // (T - min(T, w - 1)))
                                            if T > w - 1 else L),
}


@pytest.mark.parametrize("answer", [budget_right, budget_right_loop])
def test_budget_right_answers_pass(answer, capsys):
    right_answer_passes(checks.check_global_layers_within, answer, capsys)
    assert hidden_test_passes("14_long_context", "l14-interleave-test", global_layers_within=answer)


@pytest.mark.parametrize("key", list(BUDGET_WRONG))
def test_budget_mistake_is_named_and_fails_the_hidden_test(key):
    names_only(message(checks.check_global_layers_within, BUDGET_WRONG[key]), key, BUDGET_PHRASES)
    wrong = BUDGET_WRONG[key]
    assert not hidden_test_passes("14_long_context", "l14-interleave-test", global_layers_within=wrong)


def test_budget_division_by_zero_when_the_text_fits_the_window_is_explained():
    def naive(T, layers, window, budget):
        return min(layers, (budget - layers * min(T, window)) // (T - min(T, window)))
    text = message(checks.check_global_layers_within, naive)
    assert "raised ZeroDivisionError" in text and "a local layer holds all T tokens" in text
    with pytest.raises(ZeroDivisionError):
        hidden_test_passes("14_long_context", "l14-interleave-test", global_layers_within=naive)


@pytest.mark.parametrize("off", [-1, 1])
def test_budget_an_unnamed_count_is_told_its_own_cache(off):
    def wrong(T, layers, window, budget):
        return max(0, min(layers, budget_right(T, layers, window, budget) + off))
    text = message(checks.check_global_layers_within, wrong)
    assert ("one more fits" if off < 0 else "more than the budget") in text
    assert not hidden_test_passes("14_long_context", "l14-interleave-test", global_layers_within=wrong)


def test_budget_a_token_count_instead_of_layers_is_told_the_layer_limit():
    def tokens(T, layers, window, budget):
        g = budget_right(T, layers, window, budget)
        return g * T + (layers - g) * min(T, window)
    assert "has at most 62 global layers" in message(checks.check_global_layers_within, tokens)
    assert not hidden_test_passes("14_long_context", "l14-interleave-test", global_layers_within=tokens)


def test_budget_shortcut_with_a_fixed_ratio_fails():
    """A rule of thumb (a sixth of the layers global, as Gemma 3 has, whatever the budget) does not pass."""
    def rule(T, layers, window, budget):
        return layers // 6
    with pytest.raises(checks.ExerciseError):
        checks.check_global_layers_within(rule)
    assert not hidden_test_passes("14_long_context", "l14-interleave-test", global_layers_within=rule)


def test_budget_success_gives_the_gemma_answer_after_the_prediction(capsys):
    checks.check_global_layers_within(budget_right)
    out = capsys.readouterr().out
    assert "16 GiB holds 2,097,152 tokens" in out and "afford 15 global layers" in out and "the 10 of" in out


# ------------------------------------------------------------------------------- exercise 3
BASE_PHRASES = {
    "mixed": "square root of the right base", "half_exponent": "not -u/d", "no_two_pi": "not base^(2u/d) = L",
    "pair_after": "turns exactly once, so only", "pair_before": "one too many",
    "wrong_end": "counts the pairs from the wrong end", "inverted": "the exponent is upside down",
    "d_pairs": "counts d pairs", "pi": "a full turn is 2 pi radians, not pi",
    "times_two_pi": "2 pi went to the wrong side", "negative": "the exponent has the wrong sign",
}


def base_right(d, trained_length, unseen):
    i = d // 2 - unseen - 1
    return (trained_length / (2 * np.pi)) ** (d / (2 * i))


def _base(d, L, n, *, mixed=False, exponent=2.0, two_pi=True, shift=0):
    """Wrong answers as a learner writes them: the inversion with a slipped exponent or at the wrong pair."""
    if mixed:                                     # section 1's np.arange(0, d, 2) counts 2u: 2u taken for u
        two_u = np.arange(0, d, 2)[d // 2 - n - 1]
        return (L / (2 * np.pi)) ** (d / (2 * two_u))
    i = d // 2 - n - 1 + shift
    return ((L / (2 * np.pi)) if two_pi else L) ** (d / (exponent * i))


BASE_WRONG = {
    "mixed": lambda d, L, n: _base(d, L, n, mixed=True),
    "half_exponent": lambda d, L, n: _base(d, L, n, exponent=1.0),
    "no_two_pi": lambda d, L, n: _base(d, L, n, two_pi=False),
    "pair_after": lambda d, L, n: _base(d, L, n, shift=1),
    "pair_before": lambda d, L, n: _base(d, L, n, shift=-1),
    "wrong_end": lambda d, L, n: (L / (2 * np.pi)) ** (d / (2 * n)),
    "inverted": lambda d, L, n: (L / (2 * np.pi)) ** (2 * (d // 2 - n - 1) / d),
    "d_pairs": lambda d, L, n: (L / (2 * np.pi)) ** (d / (2 * (d - n - 1))),
    "pi": lambda d, L, n: (L / np.pi) ** (d / (2 * (d // 2 - n - 1))),
    "times_two_pi": lambda d, L, n: (L * 2 * np.pi) ** (d / (2 * (d // 2 - n - 1))),
    "negative": lambda d, L, n: (L / (2 * np.pi)) ** (-d / (2 * (d // 2 - n - 1))),
}


def base_right_log(d, trained_length, unseen):
    """Another right answer: take logs of 2 pi base^(2u/d) = L at the slowest pair still turning."""
    u = d // 2 - 1 - unseen
    return float(np.exp(d / (2 * u) * np.log(trained_length / (2 * np.pi))))


@pytest.mark.parametrize("answer", [base_right, base_right_log])
def test_base_right_answers_pass(answer, capsys):
    right_answer_passes(checks.check_rope_base, answer, capsys)


@pytest.mark.parametrize("answer", [base_right, base_right_log])
def test_base_right_answers_pass_the_hidden_test(answer):
    assert hidden_test_passes("14_long_context", "l14-turns-test", rope_base=answer)


@pytest.mark.parametrize("key", list(BASE_WRONG))
def test_base_mistake_is_named(key):
    names_only(message(checks.check_rope_base, BASE_WRONG[key]), key, BASE_PHRASES)
    assert not hidden_test_passes("14_long_context", "l14-turns-test", rope_base=BASE_WRONG[key])


def base_search_bisect(d, trained_length, unseen):
    """The shortcut: bisect the base on log scale until one more pair would fall short (nothing inverted)."""
    def short(base):
        return np.sum(2 * np.pi / base ** (-2 * np.arange(d // 2) / d) > trained_length)
    lo, hi = 1.0, 1e30
    for _ in range(200):
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if short(mid) <= unseen else (lo, mid)
    return lo


def base_search_tolerance(d, trained_length, unseen):
    """The same shortcut stopping at a tolerance, its test in a helper of its own."""
    lo, hi = 1.0, 1e12
    while hi - lo > 1e-6 * lo:
        mid = (lo + hi) / 2
        if _short_at(mid, d, trained_length) <= unseen:
            lo = mid
        else:
            hi = mid
    return lo


def _short_at(base, d, trained_length):
    return int(np.sum(2 * np.pi * base ** (2 * np.arange(d // 2) / d) > trained_length))


@pytest.mark.parametrize("search", [base_search_bisect, base_search_tolerance])
def test_base_search_fails_check_and_hidden_test(search):
    phrases = {**BASE_PHRASES, "search": "searches for the base"}
    names_only(message(checks.check_rope_base, search), "search", phrases)
    assert not hidden_test_passes("14_long_context", "l14-turns-test", rope_base=search)


def test_base_loop_over_pairs_is_no_search(capsys):
    """A right answer that loops over the pairs to find the slowest still turning is not a search."""
    def per_pair(d, trained_length, unseen):
        u = 0
        for pair in range(d // 2):
            if pair < d // 2 - unseen:
                u = pair
        return (trained_length / (2 * np.pi)) ** (d / (2 * u))
    right_answer_passes(checks.check_rope_base, per_pair, capsys)


def base_shortcut(d, trained_length, unseen):
    """The shortcut: a search through the package's frequencies (nothing inverted)."""
    lo, hi = 1.0, 1e30
    for _ in range(200):
        mid = np.sqrt(lo * hi)
        wavelengths = 2 * np.pi / sa.llm.rope_frequencies(d, mid)[0].double().numpy()
        lo, hi = (mid, hi) if np.sum(wavelengths > trained_length) <= unseen else (lo, mid)
    return lo


def test_base_shortcut_through_the_package_fails_check_and_hidden_test():
    assert "calls sa.llm.rope_frequencies" in message(checks.check_rope_base, base_shortcut)
    assert not hidden_test_passes("14_long_context", "l14-turns-test", rope_base=base_shortcut)


def base_shortcut_getattr(d, trained_length, unseen):
    """The same search, the package's function fetched by a name built at run time."""
    frequencies = getattr(sa.llm, "rope_" + "frequencies")
    lo, hi = 1.0, 1e30
    for _ in range(200):
        mid = np.sqrt(lo * hi)
        wavelengths = 2 * np.pi / frequencies(d, mid)[0].double().numpy()
        lo, hi = (mid, hi) if np.sum(wavelengths > trained_length) <= unseen else (lo, mid)
    return lo


def test_base_shortcut_through_getattr_fails_check_and_hidden_test():
    assert "calls sa.llm.rope_frequencies" in message(checks.check_rope_base, base_shortcut_getattr)
    assert not hidden_test_passes("14_long_context", "l14-turns-test", rope_base=base_shortcut_getattr)


# ------------------------------------------------------------ added cases: behaviour, not names
def rope_right_times_cos0(q, k):
    """A right answer that names a cosine, of 0: a constant 1, no rotation, so it passes."""
    a1, a2, b1, b2 = _pairs(q, k)
    return (a1 * b1 + a2 * b2) * np.cos(0), a1 * b2 - a2 * b1


def rope_right_conjugate(q, k):
    """A right answer through complex numbers: conj(a) b, with no angle."""
    a1, a2, b1, b2 = _pairs(q, k)
    z = np.conj(a1 + 1j * a2) * (b1 + 1j * b2)
    return z.real, z.imag


@pytest.mark.parametrize("answer", [rope_right_times_cos0, rope_right_conjugate])
def test_rope_right_answers_naming_cos_or_complex_pass_check_and_hidden_test(answer, capsys):
    right_answer_passes(checks.check_rope_coefficients, answer, capsys)
    assert hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=answer)


@pytest.mark.parametrize("form", ["real", "complex"])
def test_rope_complex_product_without_the_conjugate_is_named(form):
    def product(q, k):
        a1, a2, b1, b2 = _pairs(q, k)
        if form == "complex":
            z = (a1 + 1j * a2) * (b1 + 1j * b2)
            return z.real, z.imag
        return a1 * b1 - a2 * b2, a1 * b2 + a2 * b1
    text = message(checks.check_rope_coefficients, product)
    assert "the conjugate of a is missing" in text and "c has a minus sign" not in text
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=product)


def test_a_complex_exponential_of_an_angle_is_refused():
    def turned(q, k):
        a1, a2, b1, b2 = _pairs(q, k)
        z = np.conj((a1 + 1j * a2) * np.exp(1j * 0.5)) * (b1 + 1j * b2) * np.exp(1j * 0.5)
        return z.real, z.imag
    assert "rotates q and k" in message(checks.check_rope_coefficients, turned)
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=turned)


def test_base_two_slips_at_once_are_both_named():
    """No 2 pi and pair d/2 - unseen (one too far): both slips named, and the hidden test fails."""
    def both(d, trained_length, unseen):
        return trained_length ** (d / (2 * (d // 2 - unseen)))
    text = message(checks.check_rope_base, both)
    assert "two slips" in text and "no 2 pi" in text and "pair d/2 - unseen = " in text
    assert not hidden_test_passes("14_long_context", "l14-turns-test", rope_base=both)


def test_rope_base_smaller_than_largest_is_named():
    """A base that still qualifies but is not the largest: 0.99 times the right one."""
    def smaller(d, trained_length, unseen):
        return 0.99 * (trained_length / (2 * np.pi)) ** (d / (2 * (d // 2 - unseen - 1)))
    assert "a larger base still qualifies: find the largest" in message(checks.check_rope_base, smaller)
    assert not hidden_test_passes("14_long_context", "l14-turns-test", rope_base=smaller)


def test_rope_polar_answer_from_answers_passes(capsys):
    """tests/answers/lesson14.py's polar-form answer, run as a learner's function: check and hidden test."""
    import textwrap

    from answers.lesson14 import ANSWERS
    scope = {"np": np}
    body = textwrap.indent(textwrap.dedent(ANSWERS["l14-rope-answer-polar"]).strip("\n"), "    ")
    exec("def rope_coefficients(q, k):\n" + body, scope)   # noqa: S102  (a learner's cell)
    polar = scope["rope_coefficients"]
    right_answer_passes(checks.check_rope_coefficients, polar, capsys)
    assert hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=polar)


def test_rope_one_number_per_feature_is_named():
    def per_feature(q, k):
        return q * k, np.zeros(len(q))
    text = message(checks.check_rope_coefficients, per_feature)
    assert "c has d = 4 numbers, one per feature" in text
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=per_feature)


def test_rope_lengths_product_is_named():
    def lengths(q, k):
        h = len(q) // 2
        return np.hypot(q[:h], q[h:]) * np.hypot(k[:h], k[h:]), np.zeros(h)
    assert "the product of the two lengths" in message(checks.check_rope_coefficients, lengths)
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=lengths)


# ------------------------------------------------------------ findings of the latest review
ROPE_FORMULAS = ("a1 b1 + a2 b2", "a1 b2 - a2 b1", "a1 b2 + a2 b1", "a1 b1 - a2 b2")


@pytest.mark.parametrize("key", list(ROPE_WRONG))
def test_rope_messages_name_the_slip_without_the_formula(key):
    """A message names what the answer got wrong; it never writes out the coefficients it asks for."""
    text = message(checks.check_rope_coefficients, ROPE_WRONG[key])
    assert not any(formula in text for formula in ROPE_FORMULAS), text


def test_budget_loop_charging_local_layers_the_window_is_named():
    """A loop that adds global layers while (g + 1) T + (layers - g - 1) window fits: with T shorter than the
    window it stops at once, as a local layer is charged more than the text holds."""
    def loop(T, layers, window, budget):
        g = 0
        while g < layers and (g + 1) * T + (layers - g - 1) * window <= budget:
            g += 1
        return g

    def loop_minus_one(T, layers, window, budget):
        for g in range(layers + 1):
            if g * T + (layers - g) * window > budget:
                return g - 1
        return layers

    for wrong in (loop, loop_minus_one):
        text = message(checks.check_global_layers_within, wrong)
        assert "A local layer was charged more than min(T, window) tokens" in text, text
        assert "all 12 layers fit" in text


def test_budget_closed_form_dividing_by_T_uncapped_is_named():
    """(budget - layers min(T, window)) // T, not capped at layers: the per-layer cost named, and the cap."""
    def divide_by_T(T, layers, window, budget):
        return (budget - layers * min(T, window)) // T
    text = message(checks.check_global_layers_within, divide_by_T)
    names_only(text, "charged_T", BUDGET_PHRASES)
    assert "not capped at layers" in text
    assert not hidden_test_passes("14_long_context", "l14-interleave-test", global_layers_within=divide_by_T)


def _recorded(grade_id, monkeypatch, **names):
    """What the hidden test of ``grade_id`` hands the grader: (value, atol, rtol)."""
    from selfattention.coursework import results
    seen = []
    monkeypatch.setattr(results, "record", lambda gid, value, *, atol=1e-8, rtol=1e-5, judge=None:
                        seen.append((results.to_plain(value), atol, rtol)))
    exec(hidden_test("14_long_context", grade_id), dict(names))   # noqa: S102  (the lesson's own test code)
    return seen[0]


@pytest.mark.parametrize("rounding", [round, int])
def test_base_rounded_to_a_whole_number_passes_check_and_hidden_record(rounding, capsys, monkeypatch):
    """A base rounded to a whole number is a right answer: the visible check, the hidden asserts and the
    recorded value (compared with the instructor's at the recorded tolerance) all accept it."""
    from selfattention.coursework.results import compare

    def rounded(d, trained_length, unseen):
        return rounding(base_right(d, trained_length, unseen))
    right_answer_passes(checks.check_rope_base, rounded, capsys)
    expected, _, _ = _recorded("l14-turns-test", monkeypatch, rope_base=base_right)
    got, atol, rtol = _recorded("l14-turns-test", monkeypatch, rope_base=rounded)
    assert compare(expected, got, atol, rtol) is None


def test_base_off_by_more_than_rounding_fails_check_and_hidden_record(monkeypatch):
    """Two whole units above the largest base: refused by both."""
    from selfattention.coursework.results import compare

    def above(d, trained_length, unseen):
        return base_right(d, trained_length, unseen) + 2
    assert "pairs short of a turn, more than unseen" in message(checks.check_rope_base, above)
    expected, _, _ = _recorded("l14-turns-test", monkeypatch, rope_base=base_right)
    try:
        got, atol, rtol = _recorded("l14-turns-test", monkeypatch, rope_base=above)
    except AssertionError:                                  # the hidden asserts refuse it already
        return
    assert compare(expected, got, atol, rtol) is not None


def test_base_instructor_answer_refuses_unseen_out_of_range():
    """The instructor's answer divides by the slowest turning pair's index: it names the allowed range
    instead of dividing by zero (unseen = d/2 - 1 leaves no pair that must turn) or by a negative index."""
    from mistakes import NOTEBOOKS

    from selfattention.coursework import lessons

    cell = lessons.grade_cells(lessons.read_lesson(NOTEBOOKS / "14_long_context.ipynb"))["l14-turns-answer"]
    scope = {"np": np}
    exec(lessons.source(cell), scope)   # noqa: S102  (the lesson's own answer cell)
    rope_base = scope["rope_base"]
    assert np.isclose(rope_base(8, 4096, 2), (4096 / (2 * np.pi)) ** 4)   # the last allowed: pair 1 turns
    for unseen in (3, 4, -1):
        with pytest.raises(ValueError, match=r"unseen must be in 0\.\.2 for d = 8"):
            rope_base(8, 4096, unseen)
