"""Lesson 15's checks name each typical mistake, written as a learner would write it, and no other; two
different right answers pass; a shortcut that skips what an exercise teaches does not."""

from __future__ import annotations

import numpy as np
import pytest
from mistakes import hidden_test_passes, message, names_only, right_answer_passes

import selfattention as sa
from selfattention import checks

# ------------------------------------------------------------------------------- exercise 1
FLASH_PHRASES = {
    "no_skip": "whose keys all come after its queries", "no_diagonal": "did not read its diagonal key tile",
    "no_mask": "were not masked", "unscaled": "are not scaled", "no_rescale": "exp(m_old - m_new)",
    "whole": "were read at once", "q_again": "each tile of queries must be read exactly once",
    "o_often": "times, once per key tile", "s_p": "went through slow memory",
    "one_softmax": "Keep no list of key tiles", "own_key": "reads its own key",
    "whole_mask": "grows as T^2", "torch": "uses PyTorch", "d_v_root": "divided by sqrt(d_v)",
    "tile_mean": "normalised on its own (divided by that tile's sum) and the tiles averaged",
    "tile_sum": "normalised on its own (divided by that tile's sum) and the tiles added",
    "ell_not_o": "but the output o was not", "stale_max": "stale maximum",
    "tile_max": "relative to that tile's own maximum", "raw_exp": "with no running maximum",
}


def _flash(memory, b, *, skip=True, diagonal=True, mask=True, scale=True, rescale=True, q_again=False,
           o_every_tile=False, root="d", tile_softmax=None, rescale_o=True, stale_max=False, own_max=None):
    """The causal tiled loop, with switches for the mistakes a learner makes."""
    T, d = memory.arrays["Q"].shape
    d_v = memory.arrays["V"].shape[1]
    for i in range(0, T, b):
        q = memory.read("Q", i, i + b)
        rows = np.arange(i, i + len(q))[:, None]
        m, total = np.full((len(q), 1), -np.inf), np.zeros((len(q), 1))
        acc = np.zeros((len(q), memory.arrays["V"].shape[1]))
        for j in range(0, T, b):
            if skip and j > rows[-1, 0]:
                continue
            if not diagonal and j == i:
                continue
            if q_again and j > 0:
                q = memory.read("Q", i, i + b)
            k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
            s = q @ k.T / (np.sqrt(d if root == "d" else d_v) if scale else 1.0)
            if mask:
                s = np.where(np.arange(j, j + len(k))[None, :] <= rows, s, -np.inf)
            if own_max:  # each tile's own maximum ("tile"), or none at all ("none"), and no rescale
                e = np.exp(s - s.max(axis=1, keepdims=True)) if own_max == "tile" else np.exp(s)
                total, acc = total + e.sum(axis=1, keepdims=True), acc + e @ v
                continue
            if tile_softmax:  # each tile's own softmax, then the tiles averaged or added
                e = np.exp(s - s.max(axis=1, keepdims=True))
                acc = acc + e / e.sum(axis=1, keepdims=True) @ v
                total = total + 1 if tile_softmax == "mean" else np.ones_like(total)
                continue
            new_m = np.maximum(m, s.max(axis=1, keepdims=True))
            if stale_max and j > 0:  # the first tile's maximum kept
                new_m = m
            factor = np.exp(m - new_m) if rescale else 1.0
            total = total * factor + np.exp(s - new_m).sum(axis=1, keepdims=True)
            acc = acc * (factor if rescale_o else 1.0) + np.exp(s - new_m) @ v
            m = new_m
            if o_every_tile:
                memory.write("O", acc / total, i)
        if not o_every_tile:
            memory.write("O", acc / total, i)


def flash_right(memory, b):
    _flash(memory, b)


def flash_right_rowwise(memory, b):
    """Another right answer: the running numbers kept per query row as Python floats, updated row by row
    as each key tile passes."""
    T, d = memory.arrays["Q"].shape
    for i in range(0, T, b):
        q = memory.read("Q", i, i + b)
        m, total, acc = [-np.inf] * len(q), [0.0] * len(q), [0.0] * len(q)
        for j in range(0, i + 1, b):
            k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
            for r, row in enumerate(q):
                s = k @ row / np.sqrt(d)
                s[np.arange(j, j + len(k)) > i + r] = -np.inf
                new_m = max(m[r], s.max())
                total[r] = total[r] * np.exp(m[r] - new_m) + np.exp(s - new_m).sum()
                acc[r] = acc[r] * np.exp(m[r] - new_m) + np.exp(s - new_m) @ v
                m[r] = new_m
        memory.write("O", np.array(acc) / np.array(total)[:, None], i)


def flash_one_softmax(memory, b):
    """The shortcut: each query tile and its key tiles read as asked, but the tiles concatenated and one
    ordinary softmax taken (no running m, ell, o)."""
    T, d = memory.arrays["Q"].shape
    for i in range(0, T, b):
        q = memory.read("Q", i, i + b)
        keys, values = [], []
        for j in range(0, i + 1, b):
            keys.append(memory.read("K", j, j + b))
            values.append(memory.read("V", j, j + b))
        K, V = np.concatenate(keys), np.concatenate(values)
        s = q @ K.T / np.sqrt(d)
        s[np.arange(len(K))[None, :] > np.arange(i, i + len(q))[:, None]] = -np.inf
        p = np.exp(s - s.max(axis=1, keepdims=True))
        memory.write("O", p / p.sum(axis=1, keepdims=True) @ V, i)


def flash_own_key_masked(memory, b):
    """The mask written with >=: each query's own key is hidden too."""
    T, d = memory.arrays["Q"].shape
    for i in range(0, T, b):
        q = memory.read("Q", i, i + b)
        m, total = np.full((len(q), 1), -np.inf), np.zeros((len(q), 1))
        acc = np.zeros((len(q), memory.arrays["V"].shape[1]))
        for j in range(0, i + 1, b):
            k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
            s = q @ k.T / np.sqrt(d)
            s[np.arange(j, j + len(k))[None, :] >= np.arange(i, i + len(q))[:, None]] = -np.inf
            new_m = np.maximum(m, s.max(axis=1, keepdims=True))
            total = total * np.exp(m - new_m) + np.exp(s - new_m).sum(axis=1, keepdims=True)
            acc = acc * np.exp(m - new_m) + np.exp(s - new_m) @ v
            m = new_m
        memory.write("O", acc / total, i)


def flash_whole_mask(memory, b):
    """Tiles and the online softmax as asked, but the causal mask built once for the whole input (T x T)."""
    T, d = memory.arrays["Q"].shape
    mask = np.tri(T, dtype=bool)
    for i in range(0, T, b):
        q = memory.read("Q", i, i + b)
        m, total, acc = np.full((len(q), 1), -np.inf), np.zeros((len(q), 1)), 0.0
        for j in range(0, i + 1, b):
            k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
            s = q @ k.T / np.sqrt(d)
            s[~mask[i:i + len(q), j:j + len(k)]] = -np.inf
            new_m = np.maximum(m, s.max(axis=1, keepdims=True))
            total = total * np.exp(m - new_m) + np.exp(s - new_m).sum(axis=1, keepdims=True)
            acc = acc * np.exp(m - new_m) + np.exp(s - new_m) @ v
            m = new_m
        memory.write("O", acc / total, i)


def flash_torch_rows(memory, b):
    """The shortcut in PyTorch: tiles read as asked, then all of a row's keys concatenated and one call of
    PyTorch's attention, whose memory tracemalloc does not see."""
    import torch
    import torch.nn.functional as F  # noqa: N812

    T, d = memory.arrays["Q"].shape
    for i in range(0, T, b):
        q = torch.tensor(memory.read("Q", i, i + b))
        keys, values = [], []
        for j in range(0, i + 1, b):
            keys.append(torch.tensor(memory.read("K", j, j + b)))
            values.append(torch.tensor(memory.read("V", j, j + b)))
        K, V = torch.cat(keys), torch.cat(values)
        mask = torch.arange(len(K))[None, :] <= torch.arange(i, i + len(q))[:, None]
        memory.write("O", F.scaled_dot_product_attention(q, K, V, attn_mask=mask).numpy(), i)


FLASH_WRONG = {
    "no_skip": lambda mem, b: _flash(mem, b, skip=False),
    "no_diagonal": lambda mem, b: _flash(mem, b, diagonal=False),
    "no_mask": lambda mem, b: _flash(mem, b, mask=False),
    "unscaled": lambda mem, b: _flash(mem, b, scale=False),
    "no_rescale": lambda mem, b: _flash(mem, b, rescale=False),
    "q_again": lambda mem, b: _flash(mem, b, q_again=True),
    "o_often": lambda mem, b: _flash(mem, b, o_every_tile=True),
    "one_softmax": flash_one_softmax,
    "own_key": flash_own_key_masked,
    "whole_mask": flash_whole_mask,
    "torch": flash_torch_rows,
    "d_v_root": lambda mem, b: _flash(mem, b, root="d_v"),
    "tile_mean": lambda mem, b: _flash(mem, b, tile_softmax="mean"),
    "tile_sum": lambda mem, b: _flash(mem, b, tile_softmax="sum"),
    "ell_not_o": lambda mem, b: _flash(mem, b, rescale_o=False),
    "stale_max": lambda mem, b: _flash(mem, b, stale_max=True),
    "tile_max": lambda mem, b: _flash(mem, b, own_max="tile"),
    "raw_exp": lambda mem, b: _flash(mem, b, own_max="none"),
}


@pytest.mark.parametrize("answer", [flash_right, flash_right_rowwise])
def test_flash_right_answers_pass(answer, capsys):
    right_answer_passes(checks.check_causal_flash, answer, capsys)


@pytest.mark.parametrize("key", list(FLASH_WRONG))
def test_flash_mistake_is_named(key):
    names_only(message(checks.check_causal_flash, FLASH_WRONG[key]), key, FLASH_PHRASES)


@pytest.mark.parametrize("shortcut", [flash_torch_rows, flash_one_softmax, flash_whole_mask])
def test_flash_more_than_tiles_fails_the_hidden_test_too(shortcut):
    """Output and traffic are right for each; only what the loop holds tells them apart, so the hidden test
    measures it as the check does."""
    assert not hidden_test_passes("15_io_aware_attention", "l15-flash-test", causal_flash=shortcut, sa=sa)


@pytest.mark.parametrize("answer", [flash_right, flash_right_rowwise])
def test_flash_right_answers_pass_the_hidden_test(answer):
    assert hidden_test_passes("15_io_aware_attention", "l15-flash-test", causal_flash=answer, sa=sa)


def test_flash_loop_that_stops_before_the_diagonal_and_crashes_is_named():
    """j in range(0, i, b) skips the diagonal tile: query tile 0 reads nothing, its output is 0/0 of the wrong
    shape (acc = 0.0), and a later write raises; the check names the skipped diagonal, not the ValueError."""
    def skip_diagonal(memory, b):
        T, d = memory.arrays["Q"].shape
        for i in range(0, T, b):
            q = memory.read("Q", i, i + b)
            m, total, acc = np.full((len(q), 1), -np.inf), np.zeros((len(q), 1)), 0.0
            for j in range(0, i, b):
                k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
                s = q @ k.T / np.sqrt(d)
                new_m = np.maximum(m, s.max(axis=1, keepdims=True))
                total = total * np.exp(m - new_m) + np.exp(s - new_m).sum(axis=1, keepdims=True)
                acc = acc * np.exp(m - new_m) + np.exp(s - new_m) @ v
                m = new_m
            memory.write("O", acc / total, i)
    text = message(checks.check_causal_flash, skip_diagonal)
    names_only(text, "no_diagonal", FLASH_PHRASES)
    assert "broadcast" not in text


def test_flash_through_s_and_p_is_named():
    def standard(memory, b):
        Q, K = memory.read("Q"), memory.read("K")
        S = Q @ K.T / np.sqrt(Q.shape[1])
        memory.write("S", np.where(np.tri(len(Q), dtype=bool), S, -np.inf))
    names_only(message(checks.check_causal_flash, standard), "s_p", FLASH_PHRASES)


def test_flash_shortcut_that_reads_everything_at_once_fails():
    """Computing causal attention on whole arrays (no tiles, no online softmax) is named, not passed."""
    def shortcut(memory, b):
        Q, K, V = memory.read("Q"), memory.read("K"), memory.read("V")
        S = np.where(np.tri(len(Q), dtype=bool), Q @ K.T / np.sqrt(Q.shape[1]), -np.inf)
        P = np.exp(S - S.max(axis=1, keepdims=True))
        out = (P / P.sum(axis=1, keepdims=True)) @ V
        for i in range(0, len(Q), b):
            memory.write("O", out[i:i + b], i)
    names_only(message(checks.check_causal_flash, shortcut), "whole", FLASH_PHRASES)


def test_flash_without_max_subtraction_is_caught_on_the_large_case():
    def naive(memory, b):
        T, d = memory.arrays["Q"].shape
        for i in range(0, T, b):
            q = memory.read("Q", i, i + b)
            rows = np.arange(i, i + len(q))[:, None]
            total, acc = 0.0, 0.0
            for j in range(0, i + 1, b):
                k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
                e = np.exp(np.where(np.arange(j, j + len(k))[None, :] <= rows, q @ k.T / np.sqrt(d), -np.inf))
                total = total + e.sum(axis=1, keepdims=True)
                acc = acc + e @ v
            memory.write("O", acc / total, i)
    text = message(checks.check_causal_flash, naive)
    names_only(text, "raw_exp", FLASH_PHRASES)
    assert "subtract each row's maximum" not in text and "keep a running maximum m" in text.lower()
    with np.errstate(all="ignore"):
        assert not hidden_test_passes("15_io_aware_attention", "l15-flash-test", causal_flash=naive, sa=sa)


@pytest.mark.parametrize("key", ["tile_max", "raw_exp"])
def test_flash_max_slips_fail_the_hidden_test(key):
    with np.errstate(all="ignore"):
        assert not hidden_test_passes("15_io_aware_attention", "l15-flash-test",
                                      causal_flash=FLASH_WRONG[key], sa=sa)


def test_flash_check_prints_no_overflow_warning(recwarn):
    """A loop without a running maximum overflows on purpose in the check's large case: the check names it
    and lets no RuntimeWarning reach the learner."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(checks.ExerciseError, match="running maximum"):
            checks.check_causal_flash(FLASH_WRONG["raw_exp"])


def test_flash_the_package_loop_itself_fails():
    from selfattention import llm
    text = message(checks.check_causal_flash, llm.flash_attention_io)
    assert "flash_attention_io" in text and "passed" not in text.lower()


def test_flash_shortcut_that_calls_the_package_loop_fails():
    import selfattention as sa

    def wrapper(memory, b):
        sa.llm.flash_attention_io(memory, b)
    assert "flash_attention_io" in message(checks.check_causal_flash, wrapper)

    from selfattention.llm import flash_attention_io as imported

    def early_import(memory, b):
        imported(memory, b)
    assert "flash_attention_io" in message(checks.check_causal_flash, early_import)
    # the package's function works again after the check
    memory = sa.llm.SlowMemory(Q=np.eye(4), K=np.eye(4), V=np.eye(4))
    sa.llm.flash_attention_io(memory, 2)
    assert memory.moved == 2 * 4 * 4 + 2 * 16 * 4 // 2


# ------------------------------------------------------------------------------- exercise 2
MOVED_PHRASES = {
    "no_mask": "without the mask", "no_diagonal": "leaves out the diagonal tiles", "keys": "only the keys",
    "half": "N^2/2 of the N^2", "standard": "standard attention's count",
    "no_o": "O's write (or Q's read) is missing", "no_q_no_o": "Q's read and O's write are both missing",
    "one_row_more": "(N + 1)(N + 2)/2", "keys_and_scores": "the keys but not the values, and each b x b tile",
    "simulated": "ran more than",
}


def moved_right(T, d, b):
    return 3 * T * d + T * T * d / b


def moved_right_sum(T, d, b):
    return 2 * T * d + sum(2 * b * d * (n + 1) for n in range(T // b))


MOVED_WRONG = {
    "no_mask": lambda T, d, b: 2 * T * d + 2 * T * T * d / b,
    "no_diagonal": lambda T, d, b: 2 * T * d + sum(2 * b * d * n for n in range(T // b)),
    "keys": lambda T, d, b: 2 * T * d + sum(b * d * (n + 1) for n in range(T // b)),
    # leaving out O's write and reading half the N^2 tiles give the same count where T is a multiple of b;
    # written with N = T // b, the check's probe on T = 100, b = 32 tells them apart
    "no_q_no_o": lambda T, d, b: sum(2 * b * d * (n + 1) for n in range(T // b)),
    "no_o": lambda T, d, b: T * d + sum(2 * b * d * (n + 1) for n in range(T // b)),
    "half": lambda T, d, b: 2 * T * d + (T // b) ** 2 / 2 * 2 * b * d,
    "standard": lambda T, d, b: 4 * T * d + 4 * T * T,
    "one_row_more": lambda T, d, b: 2 * T * d + 2 * b * d * (T // b + 1) * (T // b + 2) / 2,
    "keys_and_scores": lambda T, d, b: 2 * T * d + sum((b * d + b * b) * (n + 1) for n in range(T // b)),
}


class _Counter:
    """A learner's own counter, with the read and write of a SlowMemory, that never builds one."""

    def __init__(self, T, d):
        self.arrays = {name: np.zeros((T, d)) for name in "QKV"}
        self.moved = 0

    def read(self, name, start=0, stop=None):
        rows = self.arrays[name][start:stop]
        self.moved += rows.size
        return rows

    def write(self, name, rows, start=0):
        self.moved += np.size(rows)


def moved_by_own_counter(T, d, b):
    """The shortcut found in review: exercise 1's loop run through a hand-written counter."""
    from reference_lesson15 import causal_loop as _causal_loop
    counter = _Counter(T, d)
    _causal_loop(counter, b)
    return counter.moved


def moved_by_counting_tiles(T, d, b):
    """Another: the tiles counted one by one in a double loop, no loop of attention run."""
    moved = 2 * T * d
    for i in range(0, T, b):
        for _ in range(0, i + 1, b):
            moved += 2 * b * d
    return moved


MOVED_WRONG["simulated"] = moved_by_own_counter
MOVED_WRONG["counted_tile_by_tile"] = moved_by_counting_tiles


@pytest.mark.parametrize("answer", [moved_right, moved_right_sum])
def test_moved_right_answers_pass(answer, capsys):
    right_answer_passes(checks.check_causal_elements_moved, answer, capsys)


@pytest.mark.parametrize("key", list(MOVED_WRONG))
def test_moved_mistake_is_named(key):
    named = {"counted_tile_by_tile": "simulated"}.get(key, key)  # one message for both
    said = message(checks.check_causal_elements_moved, MOVED_WRONG[key])
    names_only(said, named, MOVED_PHRASES)
    assert "3 T d" not in said and "T^2 d / b:" not in said   # the message never gives the count away


def test_moved_without_o_fails_the_hidden_test():
    assert not hidden_test_passes("15_io_aware_attention", "l15-moved-test",
                                  causal_elements_moved=MOVED_WRONG["no_o"], sa=sa)


@pytest.mark.parametrize("key", ["one_row_more", "keys_and_scores", "simulated", "counted_tile_by_tile"])
def test_moved_slips_and_simulations_fail_the_hidden_test(key):
    assert not hidden_test_passes("15_io_aware_attention", "l15-moved-test",
                                  causal_elements_moved=MOVED_WRONG[key], sa=sa)


def test_moved_messages_say_what_n_is():
    """The lesson never names N: every message that uses it says N = T/b."""
    for key in ("half", "one_row_more"):
        assert "N = T/b" in message(checks.check_causal_elements_moved, MOVED_WRONG[key])


def test_moved_shortcut_that_counts_with_the_package_fails():
    """Half the tiles, the average of masked and unmasked, is no derivation: it does not pass."""
    def guess(T, d, b):
        return 2 * T * d + T * T * d / b
    said = message(checks.check_causal_elements_moved, guess)
    assert "T d short" in said and "3 T d" not in said


def test_moved_shortcut_that_simulates_the_package_loop_fails():
    import selfattention as sa

    def simulate(T, d, b):
        memory = sa.llm.SlowMemory(**{n: np.zeros((T, d)) for n in "QKV"})
        sa.llm.flash_attention_io(memory, b)
        return memory.moved
    text = message(checks.check_causal_elements_moved, simulate)
    assert "derive the count" in text and "passed" not in text.lower()


def test_moved_without_q_and_o_is_named_apart_from_the_missing_diagonal():
    """No Q read and no O write gives T d + T^2 d / b, as leaving out the diagonal does: written with
    N = T // b, each is named alone."""
    said = message(checks.check_causal_elements_moved, MOVED_WRONG["no_q_no_o"])
    assert "Q's read and O's write are both missing" in said and "diagonal" not in said


# ------------------------------------------------------------------------------- exercise 3
BACKWARD_PHRASES = {
    "tile_softmax": "over each key tile's keys alone", "unscaled": "are not scaled",
    "no_transpose": "not P dO", "no_D": "D is missing", "D_tile": "D computed from each key tile alone",
    "L_axis": "L laid along the keys",
    "D_axis": "D laid along the keys", "dS_scaled": "exactly half", "d_v": "divided by sqrt(d_v)",
    "no_grad_scale": "twice the right ones", "not_summed": "only the last key tile's share",
    "whole": "were read at once", "torch": "uses PyTorch", "D_scalar": "one number per query",
    "arrays": "bypassing memory.read", "no_exp": "the logarithm of the weights",
    "D_dO": "row sums of dO alone", "dS_no_P": "the factor P is missing", "dK_from_P": "dK was built from P",
    "L_ignored": "do not come from the stored L", "concatenated": "kept all of K and V",
}


def _loop(q, L, O, dO, memory, b, *, scale=True, from_L=True, L_axis=0, transpose=True, D="rows", D_axis=0,
          dS_scaled=False, root="d", accumulate=True, exp_P=True, dS_P=True, dK_from="dS"):
    """One query tile's loop over the key tiles, with switches for the mistakes a learner makes."""
    T, d = memory.arrays["K"].shape
    d_v = memory.arrays["V"].shape[1]
    r = {"d": np.sqrt(d), "d_v": np.sqrt(d_v), "none": 1.0}[root]
    dq, dK, dV = np.zeros_like(q), np.zeros((T, d)), np.zeros((T, d_v))
    Dr = (dO * O).sum(axis=1)
    for j in range(0, T, b):
        k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
        S = q @ k.T / (np.sqrt(d) if scale else 1.0)
        if from_L:
            P = np.exp(S - (L[:, None] if L_axis == 0 else L[None, :]))
        else:
            from scipy.special import softmax
            P = softmax(S, axis=1)
        if not exp_P:
            P = S - L[:, None]
        dV[j:j + b] = P.T @ dO if transpose else P @ dO
        dP = dO @ v.T
        if D == "none":
            dS = P * dP
        else:
            Di = {"rows": Dr, "scalar": (dO * O).sum(), "dO": dO.sum(axis=1)}.get(D, (P * dP).sum(axis=1))
            Di = np.broadcast_to(Di, (len(q),))
            dS = (P if dS_P else 1.0) * (dP - (Di[:, None] if D_axis == 0 else Di[None, :]))
        if dS_scaled:
            dS = dS / np.sqrt(d)
        dq = (dq if accumulate else 0.0) + dS @ k / r
        dK[j:j + b] = (dS if dK_from == "dS" else P).T @ q / r
    return dq, dK, dV


def backward_right(q, L, O, dO, memory, b):
    return _loop(q, L, O, dO, memory, b)


def backward_right_loops(q, L, O, dO, memory, b):
    """Another right answer: entry by entry, the scale as d ** 0.5, D by einsum, dq summed from a list."""
    T, d = memory.arrays["K"].shape
    D = np.einsum("ie,ie->i", dO, O)
    shares, dKs, dVs = [], [], []
    for j in range(0, T, b):
        k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
        P = np.zeros((len(q), len(k)))
        dS = np.zeros((len(q), len(k)))
        for i in range(len(q)):
            for c in range(len(k)):
                P[i, c] = np.exp(np.dot(q[i], k[c]) / d ** 0.5 - L[i])
                dS[i, c] = P[i, c] * (np.dot(dO[i], v[c]) - D[i])
        shares.append(dS @ k / d ** 0.5)
        dKs.append(np.einsum("ic,id->cd", dS, q) / d ** 0.5)
        dVs.append(np.einsum("ic,ie->ce", P, dO))
    return sum(shares), np.concatenate(dKs), np.concatenate(dVs)


def backward_right_zeros_like(q, L, O, dO, memory, b):
    """Another right answer: dK and dV made with np.zeros_like(memory.arrays[...]) (shapes only) and
    filled with +=."""
    T, d = memory.arrays["K"].shape
    dq, dK, dV = np.zeros_like(q), np.zeros_like(memory.arrays["K"]), np.zeros_like(memory.arrays["V"])
    D = (dO * O).sum(axis=1, keepdims=True)
    for j in range(0, T, b):
        k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
        P = np.exp(q @ k.T / np.sqrt(d) - L[:, None])
        dS = P * (dO @ v.T - D)
        dV[j:j + b] += P.T @ dO
        dK[j:j + b] += dS.T @ q / np.sqrt(d)
        dq += dS @ k / np.sqrt(d)
    return dq, dK, dV


def backward_whole_rows(q, L, O, dO, memory, b):
    """The shortcut: all of K and V read at once and the row's gradients taken in one go (no loop)."""
    K, V = memory.read("K"), memory.read("V")
    d = K.shape[1]
    P = np.exp(q @ K.T / np.sqrt(d) - L[:, None])
    dS = P * (dO @ V.T - (dO * O).sum(axis=1, keepdims=True))
    return dS @ K / np.sqrt(d), dS.T @ q / np.sqrt(d), P.T @ dO


def backward_whole_arrays(q, L, O, dO, memory, b):
    """The shortcut: K and V taken whole from memory.arrays (never read) and the row's formulas in one go."""
    K, V = memory.arrays["K"], memory.arrays["V"]
    d = K.shape[1]
    P = np.exp(q @ K.T / np.sqrt(d) - L[:, None])
    dS = P * (dO @ V.T - (dO * O).sum(axis=1, keepdims=True))
    return dS @ K / np.sqrt(d), dS.T @ q / np.sqrt(d), P.T @ dO


def backward_concatenated(q, L, O, dO, memory, b):
    """The shortcut found in review: every tile read with memory.read, then concatenated, and section 2's
    whole-matrix code run with a fresh softmax (L ignored) and D = rowsum(P * dP) (O ignored)."""
    T = memory.arrays["K"].shape[0]
    K = np.concatenate([memory.read("K", j, j + b) for j in range(0, T, b)])
    V = np.concatenate([memory.read("V", j, j + b) for j in range(0, T, b)])
    d = K.shape[1]
    S = q @ K.T / np.sqrt(d)
    P = np.exp(S - S.max(axis=1, keepdims=True))
    P = P / P.sum(axis=1, keepdims=True)
    dP = dO @ V.T
    dS = P * (dP - (P * dP).sum(axis=1, keepdims=True))
    return dS @ K / np.sqrt(d), dS.T @ q / np.sqrt(d), P.T @ dO


def backward_concatenated_with_L(q, L, O, dO, memory, b):
    """The same shortcut with P = e^(S - L) and D from O: only what it holds in fast memory is wrong."""
    T = memory.arrays["K"].shape[0]
    K = np.concatenate([memory.read("K", j, j + b) for j in range(0, T, b)])
    V = np.concatenate([memory.read("V", j, j + b) for j in range(0, T, b)])
    d = K.shape[1]
    P = np.exp(q @ K.T / np.sqrt(d) - L[:, None])
    dS = P * (dO @ V.T - (dO * O).sum(axis=1, keepdims=True))
    return dS @ K / np.sqrt(d), dS.T @ q / np.sqrt(d), P.T @ dO


def backward_autograd(q, L, O, dO, memory, b):
    """The shortcut: PyTorch's autograd on the query tile's rows, tiles read as asked."""
    import torch
    T = len(memory.arrays["K"])
    K = torch.tensor(np.concatenate([memory.read("K", j, j + b) for j in range(0, T, b)]), requires_grad=True)
    V = torch.tensor(np.concatenate([memory.read("V", j, j + b) for j in range(0, T, b)]), requires_grad=True)
    qt = torch.tensor(q, requires_grad=True)
    (torch.softmax(qt @ K.T / q.shape[1] ** 0.5, dim=1) @ V).backward(torch.tensor(dO))
    return qt.grad.numpy(), K.grad.numpy(), V.grad.numpy()


BACKWARD_WRONG = {
    "tile_softmax": lambda *a: _loop(*a, from_L=False),
    "unscaled": lambda *a: _loop(*a, scale=False),
    "no_transpose": lambda *a: _loop(*a, transpose=False),
    "no_D": lambda *a: _loop(*a, D="none"),
    "D_tile": lambda *a: _loop(*a, D="tile"),
    "L_axis": lambda *a: _loop(*a, L_axis=1),
    "D_axis": lambda *a: _loop(*a, D_axis=1),
    "dS_scaled": lambda *a: _loop(*a, dS_scaled=True),
    "d_v": lambda *a: _loop(*a, root="d_v"),
    "no_grad_scale": lambda *a: _loop(*a, root="none"),
    "not_summed": lambda *a: _loop(*a, accumulate=False),
    "whole": backward_whole_rows,
    "torch": backward_autograd,
    "D_scalar": lambda *a: _loop(*a, D="scalar"),
    "arrays": backward_whole_arrays,
    "no_exp": lambda *a: _loop(*a, exp_P=False),
    "D_dO": lambda *a: _loop(*a, D="dO"),
    "dS_no_P": lambda *a: _loop(*a, dS_P=False),
    "dK_from_P": lambda *a: _loop(*a, dK_from="P"),
    "L_ignored": backward_concatenated,
    "concatenated": backward_concatenated_with_L,
}


@pytest.mark.parametrize("answer", [backward_right, backward_right_loops, backward_right_zeros_like])
def test_backward_right_answers_pass(answer, capsys):
    right_answer_passes(checks.check_query_tile_backward, answer, capsys)


@pytest.mark.parametrize("answer", [backward_right, backward_right_loops, backward_right_zeros_like])
def test_backward_right_answers_pass_the_hidden_test(answer):
    assert hidden_test_passes("15_io_aware_attention", "l15-backward-test", query_tile_backward=answer)


@pytest.mark.parametrize("key", list(BACKWARD_WRONG))
def test_backward_mistake_is_named(key):
    with np.errstate(all="ignore"):
        names_only(message(checks.check_query_tile_backward, BACKWARD_WRONG[key]), key, BACKWARD_PHRASES)


@pytest.mark.parametrize("key", ["tile_softmax", "no_D", "D_tile", "dS_scaled", "d_v", "not_summed", "whole",
                                 "torch", "D_scalar", "arrays", "D_dO", "dS_no_P", "dK_from_P", "L_ignored",
                                 "concatenated"])
def test_backward_refused_answers_fail_the_hidden_test_too(key):
    """Each slip, and each shortcut around the loop, fails the hidden test as it fails the check."""
    with np.errstate(all="ignore"):
        assert not hidden_test_passes("15_io_aware_attention", "l15-backward-test",
                                      query_tile_backward=BACKWARD_WRONG[key])


# ---------------------------------------------------------------- exercise 1: slips found in review
def flash_tile_local_mask(memory, b):
    """The mask built from positions inside the tile: np.tri(b) on every tile read."""
    T, d = memory.arrays["Q"].shape
    for i in range(0, T, b):
        q = memory.read("Q", i, i + b)
        m, total, acc = np.full((len(q), 1), -np.inf), np.zeros((len(q), 1)), 0.0
        for j in range(0, i + 1, b):
            k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
            s = q @ k.T / np.sqrt(d)
            s[~np.tri(len(q), len(k), dtype=bool)] = -np.inf
            new_m = np.maximum(m, s.max(axis=1, keepdims=True))
            total = total * np.exp(m - new_m) + np.exp(s - new_m).sum(axis=1, keepdims=True)
            acc = acc * np.exp(m - new_m) + np.exp(s - new_m) @ v
            m = new_m
        memory.write("O", acc / total, i)


def flash_acc_width_d(memory, b):
    """The output accumulator sized with Q's width d instead of V's d_v."""
    T, d = memory.arrays["Q"].shape
    for i in range(0, T, b):
        q = memory.read("Q", i, i + b)
        rows = np.arange(i, i + len(q))[:, None]
        m, total, acc = np.full((len(q), 1), -np.inf), np.zeros((len(q), 1)), np.zeros((len(q), d))
        for j in range(0, i + 1, b):
            k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
            s = np.where(np.arange(j, j + len(k))[None, :] <= rows, q @ k.T / np.sqrt(d), -np.inf)
            new_m = np.maximum(m, s.max(axis=1, keepdims=True))
            total = total * np.exp(m - new_m) + np.exp(s - new_m).sum(axis=1, keepdims=True)
            acc = acc * np.exp(m - new_m) + np.exp(s - new_m) @ v
            m = new_m
        memory.write("O", acc / total, i)


def flash_bypass(memory, b):
    """Q read through memory.read, but K and V tiles sliced from memory.arrays (never counted)."""
    T, d = memory.arrays["Q"].shape
    K, V = memory.arrays["K"], memory.arrays["V"]
    for i in range(0, T, b):
        q = memory.read("Q", i, i + b)
        rows = np.arange(i, i + len(q))[:, None]
        m, total, acc = np.full((len(q), 1), -np.inf), np.zeros((len(q), 1)), 0.0
        for j in range(0, i + 1, b):
            k, v = K[j:j + b], V[j:j + b]
            s = np.where(np.arange(j, j + len(k))[None, :] <= rows, q @ k.T / np.sqrt(d), -np.inf)
            new_m = np.maximum(m, s.max(axis=1, keepdims=True))
            total = total * np.exp(m - new_m) + np.exp(s - new_m).sum(axis=1, keepdims=True)
            acc = acc * np.exp(m - new_m) + np.exp(s - new_m) @ v
            m = new_m
        memory.write("O", acc / total, i)


def _pasted_source():
    """The package's loop pasted into the notebook, its helper replaced by the learner."""
    import inspect
    import math

    from selfattention import llm
    namespace = {"__name__": __name__, "np": np, "math": math, "SlowMemory": llm.SlowMemory,
                 "_positive_int": lambda name, v: v}
    code = inspect.getsource(llm.flash_attention_io) + (
        "\n\ndef causal_flash(memory, b):\n    flash_attention_io(memory, b)\n")
    exec(code, namespace)  # noqa: S102  (as a learner's cell would run it)
    return namespace["causal_flash"]


def test_flash_tile_local_mask_is_named():
    text = message(checks.check_causal_flash, flash_tile_local_mask)
    assert "np.tri(b) on every tile" in text


def test_flash_output_width_d_is_named():
    text = message(checks.check_causal_flash, flash_acc_width_d)
    assert "d_v" in text and "acc = np.zeros((len(q), d))" in text and "broadcast" not in text


def test_flash_output_width_d_fails_the_hidden_test():
    """The hidden test's values are narrower than its queries, as the check's are: the slip errors there."""
    with pytest.raises(ValueError, match="broadcast"):
        hidden_test_passes("15_io_aware_attention", "l15-flash-test", causal_flash=flash_acc_width_d, sa=sa)


def test_flash_bypassing_read_is_named():
    text = message(checks.check_causal_flash, flash_bypass)
    assert "bypassing memory.read" in text and "Keep no list" not in text
    assert not hidden_test_passes("15_io_aware_attention", "l15-flash-test", causal_flash=flash_bypass, sa=sa)


def test_flash_pasted_package_loop_fails_check_and_hidden_test():
    pasted = _pasted_source()
    assert "copy of the package's" in message(checks.check_causal_flash, pasted)
    assert not hidden_test_passes("15_io_aware_attention", "l15-flash-test", causal_flash=pasted, sa=sa)


# ---------------------------------------------------------------- exercise 2: slips found in review
@pytest.mark.parametrize(("answer", "phrase"), [
    (lambda T, d, b: T * d + 3 * b * d * (T // b) * (T // b + 1) / 2, "reads the query tile again"),
    (lambda T, d, b: 3 * T * d + T * T * d / b + b * b * (T // b) * (T // b + 1) / 2,
     "counts each b x b tile"),
    (lambda T, d, b: 2 * T * d + b * d * (T // b) * (T // b - 1) / 2,
     "only the keys and leaves out the diagonal"),
])
def test_moved_review_slips_are_named(answer, phrase):
    assert phrase in message(checks.check_causal_elements_moved, answer)


def test_package_docstring_does_not_give_exercise_2():
    from selfattention import llm
    assert "3 T d" not in llm.flash_attention_io.__doc__


def test_moved_array_answer_is_named_and_fails_the_hidden_test():
    """An array of one number is not the number the exercise asks for: check and hidden test both say no."""
    def as_array(T, d, b):
        return np.array([3 * T * d + T * T * d / b])
    said = message(checks.check_causal_elements_moved, as_array)
    assert "return one number" in said
    assert "T * d" not in said and "T d" not in said, "the message must not give the formula it asks for"
    assert not hidden_test_passes("15_io_aware_attention", "l15-moved-test", causal_elements_moved=as_array,
                                  sa=sa)


# ------------------------------------------------- exercise 2: the statistics and O counted as moved
def _moved_tiles(T, b):
    return (T // b) * (T // b + 1) / 2


@pytest.mark.parametrize(("answer", "phrase"), [
    (lambda T, d, b: moved_right(T, d, b) + 2 * T, "m and ℓ were written once"),
    (lambda T, d, b: moved_right(T, d, b) + 4 * T, "m and ℓ were read and written once"),
    (lambda T, d, b: moved_right(T, d, b) + 2 * b * _moved_tiles(T, b), "written after every key tile"),
    (lambda T, d, b: moved_right(T, d, b) + 4 * b * _moved_tiles(T, b), "read and written at every key tile"),
    (lambda T, d, b: moved_right(T, d, b) + T * d, "O is counted as read once too"),
    (lambda T, d, b: T * d + 4 * b * d * _moved_tiles(T, b), "O is counted as read and written at every"),
])
def test_moved_statistics_or_o_counted_are_named(answer, phrase):
    said = message(checks.check_causal_elements_moved, answer)
    assert phrase in said
    if "ℓ" in phrase:
        assert "m and ℓ are counted as moved" in said and "O is counted" not in said
    assert not hidden_test_passes("15_io_aware_attention", "l15-moved-test", causal_elements_moved=answer,
                                  sa=sa)


# ------------------------------------------------------ exercise 3: the right arrays in the wrong order
@pytest.mark.parametrize("order", [(0, 2, 1), (1, 0, 2), (2, 1, 0)])
def test_backward_wrong_order_is_named(order):
    def reordered(q, L, O, dO, memory, b):
        got = backward_right(q, L, O, dO, memory, b)
        return tuple(got[i] for i in order)

    names = ("dq", "dK", "dV")
    said = message(checks.check_query_tile_backward, reordered)
    assert f"returned ({', '.join(names[i] for i in order)})" in said and "Return (dq, dK, dV)" in said
    assert not hidden_test_passes("15_io_aware_attention", "l15-backward-test", query_tile_backward=reordered)


# ------------------------------------- exercise 1: the rescale's order and direction, the learner's call
def _flash_rescaled(order):
    """The causal loop as a learner writes it, with the rescale of ℓ and o done in ``order``."""
    def causal_flash(memory, b):
        T, d = memory.arrays["Q"].shape
        for i in range(0, T, b):
            q = memory.read("Q", i, i + b)
            rows = np.arange(i, i + len(q))[:, None]
            m, ell, o = np.full((len(q), 1), -np.inf), np.zeros((len(q), 1)), 0.0
            for j in range(0, i + len(q), b):
                k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
                s = np.where(np.arange(j, j + len(k))[None, :] > rows, -np.inf, q @ k.T / np.sqrt(d))
                new = np.maximum(m, s.max(axis=1, keepdims=True))
                e = np.exp(s - new)
                if order == "after":
                    shrink = np.exp(m - new)
                    ell, o = (ell + e.sum(axis=1, keepdims=True)) * shrink, (o + e @ v) * shrink
                elif order == "inverse":
                    ell, o = ell * np.exp(new - m) + e.sum(axis=1, keepdims=True), o * np.exp(new - m) + e @ v
                else:  # "normalise": divide as it goes, forgetting the sum
                    ell, o = ell * np.exp(m - new) + e.sum(axis=1, keepdims=True), o * np.exp(m - new) + e @ v
                    o, ell = o / ell, np.ones_like(ell)
                m = new
            memory.write("O", o / ell, i)
    return causal_flash


@pytest.mark.parametrize(("order", "phrase"), [
    ("after", "after this tile's terms were added"), ("inverse", "multiplied by exp(m' - m)"),
    ("normalise", "o was divided by ℓ after every tile"),
])
def test_flash_rescale_slips_are_named(order, phrase):
    said = message(checks.check_causal_flash, _flash_rescaled(order))
    assert phrase in said and "every key of query 0 was masked" not in said
    with np.errstate(all="ignore"):
        assert not hidden_test_passes("15_io_aware_attention", "l15-flash-test",
                                      causal_flash=_flash_rescaled(order), sa=sa)


def test_flash_mask_after_the_exponential_is_named():
    """Zeroing the masked exponentials after a maximum over every score: NaN where a masked score is large."""
    def masked_late(memory, b):
        T, d = memory.arrays["Q"].shape
        for i in range(0, T, b):
            q = memory.read("Q", i, i + b)
            rows = np.arange(i, i + len(q))[:, None]
            m, ell, o = np.full((len(q), 1), -np.inf), np.zeros((len(q), 1)), 0.0
            for j in range(0, i + len(q), b):
                k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
                s = q @ k.T / np.sqrt(d)
                new = np.maximum(m, s.max(axis=1, keepdims=True))
                e = np.exp(s - new) * (np.arange(j, j + len(k))[None, :] <= rows)
                ell, o = ell * np.exp(m - new) + e.sum(axis=1, keepdims=True), o * np.exp(m - new) + e @ v
                m = new
            memory.write("O", o / ell, i)

    said = message(checks.check_causal_flash, masked_late)
    assert "included the scores of masked keys" in said and "subtract each row's maximum" not in said
    with np.errstate(all="ignore"):
        assert not hidden_test_passes("15_io_aware_attention", "l15-flash-test", causal_flash=masked_late,
                                      sa=sa)


def test_package_loop_is_not_exercise_1_minus_the_mask():
    """The package's tiled loop, readable with inspect, merges log-sum-exps and keeps a normalised output:
    exercise 1's running m, ℓ and o (and its one division at the end) are not in it to copy."""
    import inspect

    from selfattention import llm
    source = inspect.getsource(llm.flash_attention_io)
    assert "logaddexp" in source and "total" not in source and ".max(" not in source


# ------------------------------------------ slips fed after the fix: each named, each fails the hidden test
def _flash_with(update):
    """Exercise 1's loop as a learner writes it, with the tile's update of (m, ℓ, o) given by ``update``."""
    def causal_flash(memory, b):
        T, d = memory.arrays["Q"].shape
        for i in range(0, T, b):
            q = memory.read("Q", i, i + b)
            rows = np.arange(i, i + len(q))[:, None]
            m, ell, o = np.full((len(q), 1), -np.inf), np.zeros((len(q), 1)), 0.0
            for j in range(0, i + 1, b):
                k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
                s = np.where(np.arange(j, j + len(k))[None, :] <= rows, q @ k.T, -np.inf)
                m, ell, o = update(s, d, m, ell, o, v)
            memory.write("O", o / ell, i)
    return causal_flash


def _ell_not_rescaled(s, d, m, ell, o, v):
    s = s / np.sqrt(d)
    new = np.maximum(m, s.max(axis=1, keepdims=True))
    return new, ell + np.exp(s - new).sum(axis=1, keepdims=True), o * np.exp(m - new) + np.exp(s - new) @ v


def _divided_by_d(s, d, m, ell, o, v):
    s = s / d
    new = np.maximum(m, s.max(axis=1, keepdims=True))
    shrink = np.exp(m - new)
    return new, ell * shrink + np.exp(s - new).sum(axis=1, keepdims=True), o * shrink + np.exp(s - new) @ v


flash_ell_not_rescaled = _flash_with(_ell_not_rescaled)
flash_divided_by_d = _flash_with(_divided_by_d)


def _backward_with(P_of, dV_of, dq_root):
    """Exercise 3's loop as a learner writes it, with P, dV's share and dq's divisor given."""
    def query_tile_backward(q, L, O, dO, memory, b):
        T, d = memory.arrays["K"].shape
        dq, dK, dV = np.zeros_like(q), np.zeros((T, d)), np.zeros((T, memory.arrays["V"].shape[1]))
        D = (dO * O).sum(axis=1, keepdims=True)
        for j in range(0, T, b):
            k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
            P = P_of(q @ k.T / np.sqrt(d), L)
            dS = P * (dO @ v.T - D)
            dV[j:j + b] = dV_of(P, dS, dO)
            dK[j:j + b] = dS.T @ q / np.sqrt(d)
            dq += dS @ k / dq_root(d)
        return dq, dK, dV
    return query_tile_backward


def _from_L(S, L):
    return np.exp(S - L[:, None])


backward_dq_unscaled = _backward_with(_from_L, lambda P, dS, dO: P.T @ dO, lambda d: 1.0)
backward_dV_from_dS = _backward_with(_from_L, lambda P, dS, dO: dS.T @ dO, np.sqrt)
backward_L_added = _backward_with(lambda S, L: np.exp(S + L[:, None]), lambda P, dS, dO: P.T @ dO, np.sqrt)
backward_tile_max = _backward_with(lambda S, L: np.exp(S - S.max(axis=1, keepdims=True)),
                                   lambda P, dS, dO: P.T @ dO, np.sqrt)   # a per-tile max, never normalised


@pytest.mark.parametrize(("answer", "phrase"), [(flash_ell_not_rescaled, "but the running sum ℓ was not"),
                                                (flash_divided_by_d, "divided by d, not by sqrt(d)")])
def test_flash_more_slips_are_named(answer, phrase):
    said = message(checks.check_causal_flash, answer)
    assert phrase in said and not [k for k, p in FLASH_PHRASES.items() if p in said]
    with np.errstate(all="ignore"):
        assert not hidden_test_passes("15_io_aware_attention", "l15-flash-test", causal_flash=answer, sa=sa)


def test_moved_m_or_l_per_query_is_named():
    def plus_T(T, d, b):
        return 3 * T * d + T * T * d / b + T
    assert "that adds T, one number per query" in message(checks.check_causal_elements_moved, plus_T)
    assert not hidden_test_passes("15_io_aware_attention", "l15-moved-test", causal_elements_moved=plus_T,
                                  sa=sa)


def test_moved_without_q_says_q_or_o():
    def no_q(T, d, b):
        N = T // b
        return T * d + b * d * N * (N + 1)
    assert "O's write (or Q's read) is missing" in message(checks.check_causal_elements_moved, no_q)


@pytest.mark.parametrize(("answer", "phrase"), [
    (backward_dq_unscaled, "dq is not divided by sqrt(d) (dK is)"),
    (backward_dV_from_dS, "dV was built from dS"), (backward_L_added, "P was taken as e^(S + L)"),
    (backward_tile_max, "largest score in this key tile")])
def test_backward_more_slips_are_named(answer, phrase):
    said = message(checks.check_query_tile_backward, answer)
    assert phrase in said and not [k for k, p in BACKWARD_PHRASES.items() if p in said]
    with np.errstate(all="ignore"):
        assert not hidden_test_passes("15_io_aware_attention", "l15-backward-test",
                                      query_tile_backward=answer)


# ------------------------------------------------------------------- review fixes: 15-5, 15-6, 15-7
def flash_deferred_write(memory, b):
    """Each query tile's output kept in a (T, d_v) array and O written once, after every tile."""
    T = memory.arrays["Q"].shape[0]
    out = np.zeros((T, memory.arrays["V"].shape[1]))

    class _Keep:
        arrays = memory.arrays
        read = staticmethod(memory.read)

        @staticmethod
        def write(name, rows, start=0):
            out[start:start + len(rows)] = rows

    from reference_lesson15 import causal_loop
    causal_loop(_Keep, b)
    memory.write("O", out, 0)


def test_flash_deferred_write_is_named():
    said = message(checks.check_causal_flash, flash_deferred_write)
    assert "were written in one piece" in said and "O rows 0..7" in said, said
    assert not hidden_test_passes("15_io_aware_attention", "l15-flash-test",
                                  causal_flash=flash_deferred_write, sa=sa)


@pytest.mark.parametrize("answer, phrase", [
    (lambda T, d, b: T * T * d / b, "follow 0 T d + 1 T^2 d / b on four sizes. Its T^2 d / b term is right"),
    (lambda T, d, b: 2 * T * d + T * T * d / (2 * b), "follow 2 T d + 0.5 T^2 d / b"),
    (lambda T, d, b: 3 * T * d + T * T * d / (2 * b), "Its T^2 d / b term is off"),
    (lambda T, d, b: 3 * T * d + T * T * d / b + T * T, "are not of the form a T d + c T^2 d / b"),
])
def test_moved_other_counts_are_named_by_their_terms(answer, phrase):
    said = message(checks.check_causal_elements_moved, answer)
    assert phrase in said, said
    assert "3 T d + T^2 d / b" not in said   # the message never gives the count away
    assert not hidden_test_passes("15_io_aware_attention", "l15-moved-test", causal_elements_moved=answer)


def test_moved_fit_to_the_checks_sizes_fails_the_hidden_test():
    """A table of the visible check's sizes passes it; the hidden test asks for other sizes."""
    from selfattention.checks.lesson15 import _MOVED_CASES

    table = {case: 3 * case[0] * case[1] + case[0] ** 2 * case[1] / case[2] for case in _MOVED_CASES}

    def fitted(T, d, b):
        return table.get((T, d, b), 3 * T * d + T * T * d / b + (T * d if T < 1024 else 0))

    assert not hidden_test_passes("15_io_aware_attention", "l15-moved-test", causal_elements_moved=fitted)


def test_package_holds_no_reference_loop():
    """The check's loops compute slips only: called with none switched on they refuse."""
    from selfattention.checks import lesson15

    memory = sa.llm.SlowMemory(**{n: np.zeros((8, 3)) for n in "QKV"})
    with pytest.raises(ValueError, match="none was switched on"):
        lesson15._slipped_loop(memory, 4)
    with pytest.raises(ValueError, match="none was switched on"):
        lesson15._slipped_query_tile(np.zeros((2, 3)), np.zeros((8, 3)), np.zeros((8, 3)), np.zeros(2),
                                     np.zeros((2, 3)), np.zeros((2, 3)), 4)
    assert not hasattr(lesson15, "_causal_loop") and not hasattr(lesson15, "_query_tile")


# exercise 3's starter code, its loop body written as a learner might (finding 15-2: the body is the task)
def _scaffolded(lines, extra=None):
    """query_tile_backward from the instructor's cell with its solution region replaced by ``lines``, defined
    among the globals ``extra`` (a notebook's leftover arrays)."""
    from mistakes import NOTEBOOKS

    from selfattention.coursework import lessons

    cells = [c for c in lessons.read_lesson(NOTEBOOKS / "15_io_aware_attention.ipynb")["cells"]
             if lessons.is_code_answer(c) and lessons.grade_id(c) == "l15-backward-answer"]
    text = lessons.source(cells[0])
    # the whole loop body after the reads is replaced (the given lines around the answer region too), so that
    # ``lines`` is a complete body written as a learner might write it
    first = text.index("\n", text.index('memory.read("V", j, j + b)')) + 1
    last = text.index("    return dq, dK, dV")
    body = "".join(f"        {line}\n" for line in lines)
    text = text[:first] + body + text[last:]
    names = {"np": np, **(extra or {})}
    exec(text, names)  # noqa: S102  (the lesson's own starter code)
    return names["query_tile_backward"]


_BODY = {"S": "S = q @ k.T / np.sqrt(d)", "P": "P = np.exp(S - L[:, None])", "dP": "dP = dO @ v.T",
         "D": "D = (dO * O).sum(axis=1)", "dS": "dS = P * (dP - D[:, None])", "dV": "dV[j:j + b] = P.T @ dO",
         "dK": "dK[j:j + b] = dS.T @ q / np.sqrt(d)", "dq": "dq += dS @ k / np.sqrt(d)"}


def _body(**swap):
    """The loop body, section 2's steps in order, with the lines named in ``swap`` written otherwise."""
    return [swap.get(key, line) for key, line in _BODY.items() if swap.get(key, line)]


def _hidden_fails(answer):
    try:   # the grader fails an answer whose hidden test raises, as well as one that asserts
        with np.errstate(all="ignore"):
            return not hidden_test_passes("15_io_aware_attention", "l15-backward-test",
                                          query_tile_backward=answer)
    except (ValueError, NameError, TypeError):
        return True


@pytest.mark.parametrize("lines, key", [
    (_body(P="P = np.exp(S - S.max(axis=1, keepdims=True)); P = P / P.sum(axis=1, keepdims=True)"),
     "tile_softmax"),
    (_body(D="D = (P * dP).sum(axis=1)"), "D_tile"),
    (_body(D="D = dO.sum(axis=1)"), "D_dO"),
    (_body(P="P = np.exp(S - L)"), "L_axis"),
    (_body(P="P = S - L[:, None]"), "no_exp"),
    (_body(D="D = (dO * O).sum()", dS="dS = P * (dP - D)"), "D_scalar"),
    (_body(dV="dV[j:j + b] = P @ dO"), "no_transpose"),
    (_body(dK="dK[j:j + b] = P.T @ q / np.sqrt(d)"), "dK_from_P"),
    (_body(dq="dq = dS @ k / np.sqrt(d)"), "not_summed"),
    (_body(dS="dS = dP - D[:, None]"), "dS_no_P"),
    (_body(S="S = q @ k.T"), "unscaled"),
])
def test_backward_starter_filled_wrong_is_named(lines, key):
    answer = _scaffolded(lines)
    names_only(message(checks.check_query_tile_backward, answer), key, BACKWARD_PHRASES)
    assert _hidden_fails(answer)


@pytest.mark.parametrize("lines", [
    _body(D="D = (dO * O).sum(axis=1, keepdims=True)", dS="dS = P * (dP - D)"),
    ["P = np.exp(q @ k.T / np.sqrt(d) - L.reshape(-1, 1))", "D = np.einsum('ic,ic->i', dO, O)",
     "dS = P * (dO @ v.T - D[:, None])", "dV[j:j + b] = P.T @ dO", "dq = dq + dS @ k / np.sqrt(d)",
     "dK[j:j + b] = (q.T @ dS).T / np.sqrt(d)"],
])
def test_backward_starter_filled_right_passes(lines, capsys):
    answer = _scaffolded(lines)
    right_answer_passes(checks.check_query_tile_backward, answer, capsys)
    assert hidden_test_passes("15_io_aware_attention", "l15-backward-test", query_tile_backward=answer)


# finding 15-1: a body that uses an array left in the notebook's globals (a demonstration's P or D)
_LEFTOVERS = {"P": np.ones((8, 8)), "D": np.ones(8), "V": np.ones((8, 4))}


@pytest.mark.parametrize(("lines", "name"), [
    (_body(D="Di = (dO * O).sum(axis=1)"), "D"),
    (_body(P="", S="", dP="dP = dO @ V.T"), "V, P"),
    (_body(dP="dP = dO @ V.T"), "V"),
])
def test_backward_global_arrays_are_named(lines, name):
    answer = _scaffolded(lines, dict(_LEFTOVERS))
    said = message(checks.check_query_tile_backward, answer)
    assert f"your function reads {name} from the notebook's globals" in said
    assert _hidden_fails(answer)


@pytest.mark.parametrize("lines", [["pass"], ["P = np.exp(q @ k.T / np.sqrt(d) - L[:, None])"]])
def test_backward_blank_body_is_named(lines):
    answer = _scaffolded(lines, dict(_LEFTOVERS))
    assert "your dq, dK and dV are all zeros, as the starter code made them" in message(
        checks.check_query_tile_backward, answer)
    assert _hidden_fails(answer)


def test_backward_D_over_the_wrong_axis_is_named():
    answer = _scaffolded(_body(D="D = (dO * O).sum(axis=0)"))
    assert "D was summed over axis 0, the queries" in message(checks.check_query_tile_backward, answer)
    assert _hidden_fails(answer)


# finding 15-9: a mask that compares positions counted from two different starts
def _flash_masked_by(mask):
    """Section 1's tiled_attention made causal, key tiles skipped as asked, with the mask line ``mask``."""
    def causal_flash(memory, b):
        T, d = memory.arrays["Q"].shape
        for i in range(0, T, b):
            q = memory.read("Q", i, i + b)
            m = np.full((len(q), 1), -np.inf)
            ell, o = np.zeros((len(q), 1)), 0.0
            for j in range(0, i + len(q), b):
                k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
                s = q @ k.T / np.sqrt(d)
                s[mask(i, j, len(q), len(k))] = -np.inf
                m_new = np.maximum(m, s.max(axis=1, keepdims=True))
                ell = ell * np.exp(m - m_new) + np.exp(s - m_new).sum(axis=1, keepdims=True)
                o = o * np.exp(m - m_new) + np.exp(s - m_new) @ v
                m = m_new
            memory.write("O", o / ell, i)
    return causal_flash


@pytest.mark.parametrize(("mask", "phrase"), [
    (lambda i, j, nq, nk: np.arange(nk)[None, :] > np.arange(i, i + nq)[:, None],
     "the mask compares a key's place within its tile (0..b-1) with the query's place in the whole sequence"),
    (lambda i, j, nq, nk: np.arange(j, j + nk)[None, :] > np.arange(nq)[:, None],
     "the mask compares a key's place in the whole sequence with the query's place within its tile"),
])
def test_flash_mask_in_two_frames_is_named(mask, phrase):
    answer = _flash_masked_by(mask)
    said = message(checks.check_causal_flash, answer)
    assert phrase in said and not [k for k, p in FLASH_PHRASES.items() if p in said]
    with np.errstate(all="ignore"):
        assert not hidden_test_passes("15_io_aware_attention", "l15-flash-test", causal_flash=answer, sa=sa)


def test_flash_same_frame_mask_passes(capsys):   # the control: the same loop, one frame on both sides
    answer = _flash_masked_by(lambda i, j, nq, nk:
                              np.arange(j, j + nk)[None, :] > np.arange(i, i + nq)[:, None])
    right_answer_passes(checks.check_causal_flash, answer, capsys)


# exercise 1's starter: section 1's loop with the start of the key-tile body left blank
def test_flash_blank_starter_is_named():
    from mistakes import starter_names

    said = message(checks.check_causal_flash, starter_names("l15-flash-answer")["causal_flash"])
    assert "before reading any key tile" in said
    assert "the start of the key-tile loop is still to write" in said


# latest review, exercise 1: a reversed mask (its NaN named from the rows it gave), masked scores set to 0 or
# NaN, and a scale by the tile size or by sqrt(d) the wrong way round
def _flash_with(mask_line, scale="np.sqrt(d)"):
    """Section 1's loop made causal as asked (tiles above the diagonal skipped), with ``mask_line`` applied
    to the tile's scores s and the scores divided by ``scale``."""
    code = f'''
def causal_flash(memory, b):
    T, d = memory.arrays["Q"].shape
    for i in range(0, T, b):
        q = memory.read("Q", i, i + b)
        m = np.full((len(q), 1), -np.inf)
        ell, o = np.zeros((len(q), 1)), 0.0
        for j in range(0, T, b):
            if j > i + len(q) - 1:
                continue
            k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
            key, query = np.arange(j, j + len(k))[None, :], np.arange(i, i + len(q))[:, None]
            s = q @ k.T / {scale}
            {mask_line}
            m_new = np.maximum(m, s.max(axis=1, keepdims=True))
            ell = ell * np.exp(m - m_new) + np.exp(s - m_new).sum(axis=1, keepdims=True)
            o = o * np.exp(m - m_new) + np.exp(s - m_new) @ v
            m = m_new
        memory.write("O", o / ell, i)
'''
    names = {"np": np}
    exec(code, names)  # noqa: S102  (a learner's cell)
    return names["causal_flash"]


@pytest.mark.parametrize(("answer", "phrases"), [
    (_flash_with("s[key < query] = -np.inf"),
     ["rows 4, 5, 6, 7 of O are NaN", "hid the keys before each query", "exp(-inf - (-inf)) is NaN"]),
    (_flash_with("s = np.where(query > key, -np.inf, s)"),
     ["rows 4, 5, 6, 7 of O are NaN", "the reverse of the causal mask"]),
    (_flash_with("s[key <= query] = -np.inf"),
     ["rows 3, 4, 5, 6, 7 of O are NaN", "hid each query's own key and those before it"]),
    (_flash_with("s[key > query] = 0"), ["the masked scores were set to 0, not -inf"]),
    (_flash_with("s[key > query] = np.nan"), ["the masked scores were set to NaN"]),
    (_flash_with("s[key > query] = -np.inf", scale="np.sqrt(b)"), ["divided by sqrt(b), the tile size"]),
    (_flash_with("s[key > query] = -np.inf", scale="np.sqrt(len(k))"), ["divided by sqrt(b), the tile size"]),
    (_flash_with("s[key > query] = -np.inf", scale="(1 / np.sqrt(d))"), ["multiplied by sqrt(d)"]),
])
def test_flash_review_mask_and_scale_slips_are_named(answer, phrases):
    said = message(checks.check_causal_flash, answer)
    assert all(p in said for p in phrases), said
    assert "subtract each row's maximum" not in said
    assert not [k for k, p in FLASH_PHRASES.items() if p in said]
    with np.errstate(all="ignore"):
        assert not hidden_test_passes("15_io_aware_attention", "l15-flash-test", causal_flash=answer, sa=sa)


@pytest.mark.parametrize("mask_line", ["s[key > query] = -np.inf", "s = np.where(key > query, -1e9, s)"])
def test_flash_review_controls_pass(mask_line, capsys):   # the same loop, the mask the right way round
    answer = _flash_with(mask_line)
    right_answer_passes(checks.check_causal_flash, answer, capsys)
    assert hidden_test_passes("15_io_aware_attention", "l15-flash-test", causal_flash=answer, sa=sa)


def test_flash_other_nan_names_its_rows_not_the_maximum():
    """A NaN no named slip explains: the message gives the rows and the loop's own causes of NaN."""
    answer = _flash_with("s[key > query] = -np.inf\n            s[:, :1] = -np.inf")
    said = message(checks.check_causal_flash, answer)
    assert "of O are NaN or infinite" in said and "exp(-inf - (-inf))" in said
    assert "subtract each row's maximum" not in said


# latest review, exercise 3: dK unscaled, D as one number, D from dP, and four more
@pytest.mark.parametrize(("lines", "phrase"), [
    (_body(dK="dK[j:j + b] = dS.T @ q"), "dK is not divided by sqrt(d) (dq is)"),
    (_body(D="D = dP.sum(1)"), "D was taken as the row sums of dP over this tile's keys"),
    (_body(D="D = np.sum(dP, axis=0)"), "D was taken as the column sums of dP"),
    (_body(D="D = (dO * O).mean(axis=1)"), "D is the mean of dO * O over each row"),
    (_body(dV="dV[j:j + b] = P.T @ dO / np.sqrt(d)"), "dV was divided by sqrt(d)"),
])
def test_backward_review_slips_are_named(lines, phrase):
    answer = _scaffolded(lines)
    said = message(checks.check_query_tile_backward, answer)
    assert phrase in said and "differs from the right answer" not in said, said
    assert not [k for k, p in BACKWARD_PHRASES.items() if p in said]
    assert _hidden_fails(answer)


@pytest.mark.parametrize(("lines", "phrase"), [
    (_body(D="D = np.sum(dO * O)"), "D must be one number per query row"),
    (_body(D="D = np.sum(dO * O, axis=1, keepdims=True)"), "summed with keepdims=True"),
])
def test_backward_review_crashes_are_named(lines, phrase):
    answer = _scaffolded(lines)
    assert phrase in message(checks.check_query_tile_backward, answer)
    try:
        failed = _hidden_fails(answer)
    except IndexError:   # the hidden test raises: the grader fails the answer
        failed = True
    assert failed


def test_exercise_3_states_the_memory_rule_its_check_enforces():
    """dK and dV are returned whole (they stand for slow memory); a whole row of scores is refused."""
    from mistakes import NOTEBOOKS

    from selfattention.coursework import lessons

    cells = lessons.read_lesson(NOTEBOOKS / "15_io_aware_attention.ipynb")["cells"]
    text = "".join(lessons.source(c) for c in cells if "### Exercise 3" in lessons.source(c))
    text = " ".join(text.split())
    assert "returned whole" in text and "refuses a loop that builds a whole row of scores" in text
    assert "whole row of scores" in message(checks.check_query_tile_backward, backward_concatenated_with_L)


def test_backward_blank_starter_is_named():
    """The learner's copy as handed out: the given lines use P and D before the learner has written them."""
    from mistakes import starter_names

    blank = starter_names("l15-backward-answer")["query_tile_backward"]
    said = message(checks.check_query_tile_backward, blank)
    assert "P is not defined yet" in said and "P = " not in said


def test_backward_answer_region_holds_only_p_and_d():
    """Exercise 3 asks for the two lines the stored L and O make possible; the rest of the body is given."""
    from mistakes import NOTEBOOKS

    from selfattention.coursework import lessons

    cells = [c for c in lessons.read_lesson(NOTEBOOKS / "15_io_aware_attention.ipynb")["cells"]
             if lessons.is_code_answer(c) and lessons.grade_id(c) == "l15-backward-answer"]
    text = lessons.source(cells[0])
    region = text[text.index("### BEGIN SOLUTION"):text.index("### END SOLUTION")]
    assert [line.split("=")[0].strip() for line in region.splitlines()[1:] if line.strip()] == ["P", "D"]


# review round: exercise 1's starter among the notebook's globals (section 2's demonstration leaves Q, K, V
# and its PyTorch tensors), a missing k, v or s named as such, a global array named before PyTorch
def _section_2_globals():
    """The globals section 2's demonstration cell leaves in the notebook, as it runs there."""
    import torch
    from mistakes import NOTEBOOKS

    from selfattention.coursework import lessons

    cells = lessons.read_lesson(NOTEBOOKS / "15_io_aware_attention.ipynb")["cells"]
    demo = next(lessons.source(c) for c in cells if "dS_all = " in lessons.source(c))
    names = {"np": np, "torch": torch, "sa": sa}
    exec(demo, names)  # noqa: S102  (the lesson's own cell)
    return {k: v for k, v in names.items() if not k.startswith("__")}


_FLASH_START = '''
def causal_flash(memory, b):
    T, d = memory.arrays["Q"].shape
    for i in range(0, T, b):
        q = memory.read("Q", i, i + b)
        m = np.full((len(q), 1), -np.inf)
        ell, o = np.zeros((len(q), 1)), 0.0
        for j in range(0, T, b):
{body}
            m_new = np.maximum(m, s.max(axis=1, keepdims=True))
            ell = ell * np.exp(m - m_new) + np.exp(s - m_new).sum(axis=1, keepdims=True)
            o = o * np.exp(m - m_new) + np.exp(s - m_new) @ v
            m = m_new
        memory.write("O", o / ell, i)
'''
_SKIP = "if j > i + len(q) - 1: continue"
_MASK = "s = np.where(np.arange(j, j + len(k))[None, :] > np.arange(i, i + len(q))[:, None], -np.inf, s)"


def _flash_body(lines, extra=None):
    """Exercise 1's starter with ``lines`` as the start of the key-tile loop, defined among ``extra``."""
    body = "".join(f"            {line}\n" for line in lines)
    names = {"np": np, **(extra if extra is not None else _section_2_globals())}
    exec(_FLASH_START.format(body=body), names)  # noqa: S102  (a learner's cell)
    return names["causal_flash"]


def _flash_hidden_fails(answer):
    try:
        with np.errstate(all="ignore"):
            return not hidden_test_passes("15_io_aware_attention", "l15-flash-test", causal_flash=answer,
                                          sa=sa)
    except (NameError, ValueError, TypeError, IndexError):
        return True


def test_section_2_leaves_no_tile_names_for_exercise_1():
    import torch

    leftover = _section_2_globals()
    assert not {"q", "k", "v", "s"} & set(leftover)
    assert any(isinstance(v, torch.Tensor) for v in leftover.values())   # its tensors are there, renamed


def test_flash_blank_starter_among_the_notebooks_globals_is_named():
    from mistakes import starter_names

    blank = starter_names("l15-flash-answer", _section_2_globals())["causal_flash"]
    said = message(checks.check_causal_flash, blank)
    assert "the start of the key-tile loop is still to write" in said and "PyTorch" not in said


@pytest.mark.parametrize(("lines", "phrase"), [
    ([_SKIP, 'k = memory.read("K", j, j + b)', "s = q @ k.T / np.sqrt(d)", _MASK],
     "v is not defined. The given lines after your answer use this tile's k, v and scores s"),
    ([_SKIP, 'v = memory.read("V", j, j + b)', "s = q @ k.T / np.sqrt(d)", _MASK],
     "k is not defined. The given lines after your answer use this tile's k, v and scores s"),
    ([_SKIP, 'k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)',
      "scores = q @ k.T / np.sqrt(d)"],
     "s is not defined. The given lines after your answer use this tile's k, v and scores s"),
    ([_SKIP, 'v = memory.read("V", j, j + b)', "s = q @ K[j:j + b].T / np.sqrt(d)",
      "s = np.where(np.arange(j, j + s.shape[1])[None, :] > np.arange(i, i + len(q))[:, None], -np.inf, s)"],
     "your function reads K from the notebook's globals (K (8, 4))"),
    ([_SKIP, 'k = memory.read("K", j, j + b)', "v = V[j:j + b]", "s = q @ k.T / np.sqrt(d)", _MASK],
     "your function reads V from the notebook's globals (V (8, 4))"),
    ([_SKIP, 'k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)',
      'rows = len(memory.read("K", j, j + b))', "s = q @ k.T / np.sqrt(d)", _MASK],
     "read the key tiles starting at rows [0, 0]; it needs each of the tiles starting at rows [0] once: the "
     "key tile at row 0 was read 2 times"),
])
def test_flash_missing_or_global_tile_is_named(lines, phrase):
    answer = _flash_body(lines)
    said = message(checks.check_causal_flash, answer)
    assert phrase in said and "PyTorch" not in said, said
    assert _flash_hidden_fails(answer)


def test_flash_global_tensor_is_named_before_pytorch():
    """A tensor left in the globals under a tile's name is an array the loop never assigned, not PyTorch."""
    import torch

    answer = _flash_body([_SKIP, 'k = memory.read("K", j, j + b)', "s = q @ k.T / np.sqrt(d)", _MASK],
                         {"v": torch.zeros(8, 4)})
    said = message(checks.check_causal_flash, answer)
    assert "your function reads v from the notebook's globals" in said and "uses PyTorch" not in said


# review round: P from L written as if L were the sum, or without L
@pytest.mark.parametrize(("line", "phrase"), [
    ("P = np.exp(S) / L[:, None]", "P was taken as e^S / L: L is a log-sum-exp"),
    ("P = np.exp(S - np.log(L[:, None]))", "P was taken as e^S / L: L is a log-sum-exp"),
    ("P = np.exp(S)", "P was taken as e^S, with L left out"),
])
def test_backward_L_as_a_sum_or_left_out_is_named(line, phrase):
    answer = _scaffolded(_body(P=line))
    said = message(checks.check_query_tile_backward, answer)
    assert phrase in said and "normalisation is missing" not in said, said
    assert _hidden_fails(answer)


def test_backward_e_S_over_e_L_passes(capsys):   # P = e^S / e^L, the same weights written otherwise
    answer = _scaffolded(_body(P="P = np.exp(S) / np.exp(L)[:, None]"))
    right_answer_passes(checks.check_query_tile_backward, answer, capsys)
    assert hidden_test_passes("15_io_aware_attention", "l15-backward-test", query_tile_backward=answer)


# review round: a count T d short is named from the answer's own form where it tells (N = T // b)
def test_moved_half_the_tiles_with_o_leads_with_the_half():
    def half_with_o(T, d, b):
        N = T // b
        return 2 * T * d + 2 * b * d * N * N / 2
    said = message(checks.check_causal_elements_moved, half_with_o)
    assert "N^2/2 of the N^2" in said and "is missing" not in said and "3 T d" not in said
    assert not hidden_test_passes("15_io_aware_attention", "l15-moved-test",
                                  causal_elements_moved=half_with_o)


@pytest.mark.parametrize(("answer", "phrase"), [
    (lambda T, d, b: 2 * T * d + T * T * d / b, "your count is T d short"),
    (lambda T, d, b: T * d + T * T * d / b, "your count is 2 T d short")])
def test_moved_short_in_an_undecidable_form_names_the_deficit_only(answer, phrase):
    """Written with T/b, slips that give the same polynomial cannot be told apart: the message names the
    missing T d (one mistake, as observed), lists no slips and gives no count away."""
    said = message(checks.check_causal_elements_moved, answer)
    assert phrase in said and "N = T // b" in said
    assert not [k for k, p in MOVED_PHRASES.items() if p in said], said
    assert "3 T d" not in said and "T^2 d / b" not in said


def test_moved_half_the_tiles_without_o_is_among_the_named():
    def half_no_o(T, d, b):
        return T * d + b * d * (T // b) ** 2
    said = message(checks.check_causal_elements_moved, half_no_o)
    assert "counts half of the N^2 tiles (N^2/2, N = T/b) and leaves out O's write" in said
    assert not hidden_test_passes("15_io_aware_attention", "l15-moved-test", causal_elements_moved=half_no_o)


# review round: a large negative fill such as -1e30 is as right as -inf; with the wrong comparison it is named
@pytest.mark.parametrize("mask_line", ["s[key > query] = -1e30", "s = np.where(key > query, -torch.inf, s)"])
def test_flash_finite_fill_and_torch_constant_pass(mask_line, capsys):
    import torch

    answer = _flash_with(mask_line)
    answer.__globals__["torch"] = torch
    right_answer_passes(checks.check_causal_flash, answer, capsys)
    assert hidden_test_passes("15_io_aware_attention", "l15-flash-test", causal_flash=answer, sa=sa)


@pytest.mark.parametrize(("mask_line", "phrase"), [
    ("s[key >= query] = -1e30", "hid each query's own key too"),
    ("s[key < query] = -1e30", "hid the keys before each query"),
    ("s[key <= query] = -1e9", "hid each query's own key and those before it")])
def test_flash_finite_fill_with_the_wrong_comparison_is_named(mask_line, phrase):
    answer = _flash_with(mask_line)
    said = message(checks.check_causal_flash, answer)
    assert phrase in said and "-1e30 works as well as -inf" in said, said
    assert not [k for k, p in FLASH_PHRASES.items() if p in said]
    assert not hidden_test_passes("15_io_aware_attention", "l15-flash-test", causal_flash=answer, sa=sa)


def test_importing_torch_is_no_shortcut_but_computing_with_it_is():
    """Only a PyTorch function or tensor counts: a bare import, or torch.inf, computes nothing."""
    from selfattention.checks.lesson15 import uses_torch

    def imports_only(memory, b):
        import torch  # noqa: F401
        return np.exp(0.0)

    def constant(memory, b):
        return -__import__("torch").inf

    def computes(memory, b):
        import torch.nn.functional as F  # noqa: N812
        return F.softmax

    assert not uses_torch(imports_only) and not uses_torch(constant) and uses_torch(computes)


def test_backward_messages_never_give_the_two_graded_lines():
    """Exercise 3 grades P and D: no message of its check writes either line out."""
    from selfattention.checks import lesson15

    texts = [text for text, _ in lesson15._BACKWARD_SLIPS.values()]
    texts += [message(checks.check_query_tile_backward, _scaffolded(_body(P="P = np.exp(S)")))]
    texts += [message(checks.check_query_tile_backward, _scaffolded(_body(D="D = dO.sum(axis=1)")))]
    for text in texts:
        assert "L[:, None])" not in text.replace("dP - D[:, None]", "") and "(dO * O).sum(axis=1)" not in text
        assert "rowsum(dO * O)" not in text, text
