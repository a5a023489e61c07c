"""Checks for lesson 04 (learnable projections): make each word look at the word that happens to come next,
with two query/key axes; make two words whose weights differ receive the same output; load the lesson's
W_Q, W_K, W_V into a PyTorch layer's nn.Linear parts.

Every named mistake gives a result different from the right answer and from every other named mistake.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._engine import ExerciseError, _to_array, passed, reference_softmax

__all__ = ["check_loaded_layer", "check_next_word", "check_values"]

# The lesson's toy sentence "Sam ate (a) red apple": features person, action, food, fruit, red (d_model = 5).
WORDS = ("Sam", "ate", "red", "apple")
_X_TOY = np.array(
    [
        [1.0, 0.0, 0.0, 0.0, 0.0],  # Sam
        [0.0, 1.0, 0.0, 0.0, 0.0],  # ate
        [0.0, 0.0, 0.0, 0.0, 1.0],  # red
        [0.0, 0.0, 1.0, 1.0, 1.0],  # apple
    ]
)
# Query and key axes (d_k = 3): person, action, food. Row f of W_Q: what feature f makes a word look for.
_W_Q = np.array(
    [
        [0.0, 2.0, 0.0],  # person -> looks for an action
        [1.0, 0.0, 2.0],  # action -> looks for food, and a little for a person
        [0.0, 0.0, 0.0],  # food
        [0.0, 0.0, 0.0],  # fruit
        [0.0, 0.0, 2.0],  # red -> looks for a thing to describe (food here)
    ]
)
_W_V = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]])  # the lesson's: person, food
_W_K = np.array(
    [
        [1.0, 0.0, 0.0],  # person -> is found as a person
        [0.0, 1.0, 0.0],  # action -> as an action
        [0.0, 0.0, 1.0],  # food -> as food
        [0.0, 0.0, 0.0],  # fruit
        [0.0, 0.0, 0.0],  # red
    ]
)


_CAP = 3.0  # Exercise 3 keeps every entry of W_V_new in [-3, 3]


# ----------------------------------------------------------------- Exercise 3: different weights, one output

_SAM, _ATE, _RED, _APPLE = 0, 1, 2, 3
_APART = 0.05       # z_ate must differ from z_Sam by at least this on some axis


def _fmt(v: np.ndarray, digits: int = 3) -> str:
    return "(" + ", ".join(f"{x:.{digits}g}" for x in np.asarray(v, dtype=float).ravel()) + ")"


def _fmt_pair(a: np.ndarray, b: np.ndarray) -> tuple[str, str]:
    """Two vectors written with the fewest significant digits (3 or more) that show them different."""
    for digits in range(3, 13):
        sa, sb = _fmt(a, digits), _fmt(b, digits)
        if sa != sb:
            return sa, sb
    return sa, sb


def check_values(W_V_new: Any) -> None:
    """Exercise 3: a W_V (5, 2), entries in [-3, 3], with which z_Sam = z_red under the lesson's W_Q and W_K
    while z_ate lies at least 0.05 away on some axis, and every word but one hands over a nonzero value (so
    v_ate = v_apple = 0 with only Sam's row set, which needs no design, is refused). Sam's and red's weights
    differ only on 'ate' and 'apple', by c = (e^2 - 1) / (e^2 + 3) = 0.615 each way:
    z_Sam - z_red = c (v_ate - v_apple)."""
    scores = (_X_TOY @ _W_Q) @ (_X_TOY @ _W_K).T
    alpha = reference_softmax(scores)                         # (4, 4), no scaling
    right = float(alpha[_SAM, _ATE] - alpha[_RED, _ATE])      # = (e^2 - 1) / (e^2 + 3)
    if W_V_new is None or W_V_new is Ellipsis:
        raise ExerciseError("W_V_new has no value yet: write your (5, 2) matrix in the answer cell above.")
    W = _to_array(W_V_new, "W_V_new")
    if W.shape == (2, 5):
        raise ExerciseError(
            "W_V_new has shape (2, 5): its rows and columns are swapped. Here a projection is "
            "(d_model, d_v) = (5, 2), one row per feature, used as X_toy @ W_V_new."
        )
    if W.shape == (4, 2):
        raise ExerciseError(
            "W_V_new has shape (4, 2), one row per word: those are the values V themselves. W_V has one row "
            "per feature, (d_model, d_v) = (5, 2), and a word's value is the sum of the rows for its features."
        )
    if W.shape != (5, 2):
        raise ExerciseError(f"W_V_new has shape {W.shape}; it should be (d_model, d_v) = (5, 2).")
    if not np.all(np.isfinite(W)):
        raise ExerciseError("W_V_new contains NaN or infinite values.")
    if np.abs(W).max() > _CAP + 1e-9:
        raise ExerciseError(f"W_V_new has an entry of {W.flat[np.abs(W).argmax()]:.4g}: keep every entry "
                            f"between -{_CAP:g} and {_CAP:g}, as the exercise asks.")
    V = _X_TOY @ W
    Z = alpha @ V
    if np.allclose(W, _W_V):
        raise ExerciseError(
            f"W_V_new is still the lesson's W_V (person and food handed over): nothing was designed yet. With it, "
            f"z_Sam = {_fmt(Z[_SAM].round(3))} and z_red = {_fmt(Z[_RED].round(3))} differ. Write z_Sam - z_red as sum_j (alpha_Sam,j - "
            f"alpha_red,j) v_j: on which words do the two weight rows differ?"
        )
    near = lambda a, b: bool(np.allclose(a, b, rtol=0.0, atol=1e-6))  # noqa: E731
    if near(Z[_SAM], Z[_RED]):
        gap = float(np.abs(Z[_ATE] - Z[_SAM]).max())
        if gap < _APART:
            head = f"z_Sam = z_red = {_fmt(Z[_SAM].round(3))}, but 'ate' receives {_fmt(Z[_ATE].round(3))}"
            if np.ptp(V, axis=0).max() <= 1e-6:
                raise ExerciseError(
                    f"{head}, the same: every word hands over the same value {_fmt(V[_SAM])}, and weights "
                    f"that sum to 1 mix equal values into that value, for every word. Keep v_ate = v_apple, "
                    f"and give Sam a value of its own."
                )
            # With v_ate = v_apple = u, z_ate - z_Sam = sum_j (alpha_ate,j - alpha_Sam,j)(v_j - u): only the
            # terms of Sam and red remain, since the weight differences sum to 0.
            f_sam = float(alpha[_ATE, _SAM] - alpha[_SAM, _SAM])
            f_red = float(alpha[_ATE, _RED] - alpha[_SAM, _RED])
            d_sam, d_red = V[_SAM] - V[_ATE], V[_RED] - V[_ATE]
            if np.abs(f_sam * d_sam).max() >= _APART:
                advice = "your v_red cancels most of what v_Sam adds: move v_red towards v_ate, or v_Sam further."
            else:
                advice = (f"red's factor is small, so red's value barely moves z_ate: give Sam a value at least "
                          f"{_APART / abs(f_sam):.1f} from v_ate on some axis.")
            raise ExerciseError(
                f"{head}, only {gap:.3g} from z_Sam on its farthest axis (at least {_APART} is asked). With "
                f"v_ate = v_apple, z_ate - z_Sam = {f_sam:.3f} (v_Sam - v_ate) {'+' if f_red >= 0 else '-'} "
                f"{abs(f_red):.3f} (v_red - v_ate): 'ate' gives Sam {alpha[_ATE, _SAM]:.3f} where Sam gives "
                f"itself {alpha[_SAM, _SAM]:.3f}, and red {alpha[_ATE, _RED]:.3f} where Sam gives it "
                f"{alpha[_SAM, _RED]:.3f}. Yours: v_Sam - v_ate = {_fmt(d_sam.round(3))}, v_red - v_ate = "
                f"{_fmt(d_red.round(3))}; {advice}"
            )
        # the shortcut: v_ate = v_apple = 0, only Sam's row (or Sam's and red's) set
        idle = [f"'{w}'" for w, v in zip(WORDS, V, strict=True) if np.abs(v).max() <= 1e-9]
        if len(idle) >= 2:
            idle = [", ".join(idle[:-1]), idle[-1]]
            raise ExerciseError(
                f"z_Sam = z_red = {_fmt(Z[_SAM].round(3))}, but {' and '.join(idle)} hand over nothing (a value "
                f"of 0): outputs that mix mostly zeros agree without any design. The exercise asks every word but "
                f"one to hand over a nonzero value. Write z_Sam - z_red as sum_j (alpha_Sam,j - alpha_red,j) v_j: "
                f"on which words do the two weight rows differ, and what must their values do?"
            )
        passed(
            f"'Sam' and 'red' both receive {_fmt(Z[_SAM].round(3))}, though Sam gives 'ate' {alpha[_SAM, _ATE]:.3f} "
            f"and red gives it {alpha[_RED, _ATE]:.3f}: z_Sam - z_red = {right:.3f} (v_ate - v_apple) and "
            f"v_ate = v_apple = {_fmt(V[_ATE])}. 'ate' receives {_fmt(Z[_ATE].round(3))}. The weights never "
            f"changed: W_V only chose what they mix."
        )
        return
    z_sam, z_red = _fmt_pair(Z[_SAM], Z[_RED])
    where = f"z_Sam = {z_sam} and z_red = {z_red} differ"
    if np.abs(Z[_SAM] - Z[_RED]).max() < 0.01:      # a near miss: say by how much, rounding would hide it
        where += f" (by up to {np.abs(Z[_SAM] - Z[_RED]).max():.2g}; the check allows 1e-6)"
    v_ate, v_apple = _fmt_pair(V[_ATE], V[_APPLE])
    # v_ate set to some of apple's rows, food or fruit among them (the red row alone is v_red: a wrong pair)
    # ... unless v_apple equals v_Sam or v_red: then the learner equalised a wrong pair, named below
    apple_paired = near(V[_APPLE], V[_SAM]) or near(V[_APPLE], V[_RED])
    if not apple_paired and not np.allclose(V[_ATE], V[_APPLE], rtol=0.0, atol=0.01) and np.abs(
            W[1]).max() > 1e-9 and any(
            near(W[1], W[rows].sum(0)) and np.abs(W[[r for r in rows if r != 4]]).max() > 1e-9
            for rows in ([2], [3], [2, 3], [2, 4], [3, 4])):
        raise ExerciseError(
            f"{where}: v_ate = {v_ate} but v_apple = {v_apple}. 'apple' has three features, so its "
            f"value is the sum of the food, fruit and red rows of W_V_new, all three."
        )
    if near(V[_SAM], V[_RED]):
        raise ExerciseError(
            f"{where}, though you made v_Sam = v_red = {_fmt(V[_SAM])}: your v_Sam = v_red is not needed, "
            f"since Sam's and red's outputs are mixes of every word's value. Write z_Sam - z_red as "
            f"sum_j (alpha_Sam,j - alpha_red,j) v_j and compare the two weight rows word by word: where do they "
            f"differ, and what must the values of those words do?"
        )
    pairs = [(a, b) for a in range(4) for b in range(a + 1, 4)
             if (a, b) not in ((_SAM, _RED), (_ATE, _APPLE)) and near(V[a], V[b]) and np.abs(V[a]).max() > 1e-9]
    side_effect = near(W[2] + W[3], np.zeros(2))      # zero food and fruit rows: v_red = v_apple follows
    pairs = [pair for pair in pairs if not (side_effect and pair == (_RED, _APPLE))]
    if pairs:              # two values made equal, but not the two the weight rows differ on
        a, b = pairs[0]
        raise ExerciseError(
            (f"{where}: v_ate = {v_ate} but v_apple = {v_apple}, and you made v_{WORDS[a]} = v_{WORDS[b]} = "
             f"{_fmt(V[a])}, which z_Sam = z_red does not need. Write" if not near(V[_ATE], V[_APPLE]) else
             f"{where}: you made v_{WORDS[a]} = v_{WORDS[b]} = {_fmt(V[a])}, but z_Sam = z_red does not need "
             f"those two values to agree. Write")
            + " z_Sam - z_red as sum_j (alpha_Sam,j - alpha_red,j) v_j and compare "
            "the two weight rows word by word: the values that must agree belong to the words where they differ."
        )
    if side_effect and near(V[_RED], V[_APPLE]):
        raise ExerciseError(
            f"{where}: v_ate = {v_ate} but v_apple = {v_apple}, and those two values must agree. Your food and "
            f"fruit rows add up to zero, so v_apple = v_red: that is allowed, but it is not what z_Sam = z_red "
            f"needs. Sam's and red's weight rows differ on 'ate' and 'apple' only."
        )
    raise ExerciseError(
        f"{where}: v_ate = {v_ate}, v_apple = {v_apple}. Write z_Sam - z_red as "
        f"sum_j (alpha_Sam,j - alpha_red,j) v_j: which weights differ, and so which two values must agree?"
    )


# ----------------------------------------------------------------- Exercise 1: the next word, with d_k = 2

_NEXT = (1, 2, 3, 0)  # Sam -> ate -> red -> apple -> Sam
# The given W_K_next: keys Sam (1, 0), ate (0, 1), red (-1, 0), apple = food + fruit + red = (0, -1).
_W_K_NEXT = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, -1.0], [0.0, 0.0], [-1.0, 0.0]])


def _next_word_weights(W_q: np.ndarray, W_k: np.ndarray) -> np.ndarray:
    """softmax((X W_q)(X W_k)^T) for the toy sentence, (4, 4), no scaling."""
    with np.errstate(over="ignore", invalid="ignore"):
        return reference_softmax((_X_TOY @ W_q) @ (_X_TOY @ W_k).T)


def check_next_word(W_Q_next: Any, W_K_next: Any, draw: bool = False) -> None:
    """Exercise 1: W_Q_next of shape (5, 2) with which every word of 'Sam ate red apple' gives at least 0.8 of
    its attention to the next word ('apple' to 'Sam'), softmax of the raw scores, under the given keys: W_K_next
    must give the four keys of the lesson's matrix (the hidden test uses that matrix). With ``draw``,
    first draws the four keys as points and the four queries as arrows in the plane (once the shapes are
    right)."""
    Wq, Wk = _to_array(W_Q_next, "W_Q_next"), _to_array(W_K_next, "W_K_next")
    for name, W in (("W_Q_next", Wq), ("W_K_next", Wk)):
        what = "queries Q" if name == "W_Q_next" else "keys K"
        if W.ndim == 2 and W.shape == (4, 2):
            raise ExerciseError(
                f"{name} has shape (4, 2), one row per word (T x d_k): those are the {what} themselves. "
                f"{name} has one row per feature (person, action, food, fruit, red), (d_model, d_k) = (5, 2), and a "
                f"word's row of X_toy @ {name} is the sum of the rows for its features."
            )
        if W.ndim == 2 and W.shape == (2, 4):
            raise ExerciseError(
                f"{name} has shape (2, 4), one column per word: those are the {what} themselves, transposed. "
                f"{name} has one row per feature, (d_model, d_k) = (5, 2), used as X_toy @ {name}."
            )
        if W.ndim == 2 and W.shape[1] == 5 and W.shape[0] != 5:
            raise ExerciseError(
                f"{name} has shape {W.shape}: its rows and columns are swapped. Here a projection "
                f"is (d_model, d_k) = (5, 2), used as X_toy @ {name}."
            )
        if W.ndim != 2 or W.shape[0] != 5:
            raise ExerciseError(f"{name} has shape {W.shape}; it should be (d_model, d_k) = (5, 2).")
        if not np.all(np.isfinite(W)):
            raise ExerciseError(f"{name} contains NaN or infinite values.")
    if Wq.shape[1] != Wk.shape[1]:
        raise ExerciseError(
            f"W_Q_next gives queries of size {Wq.shape[1]} and W_K_next keys of size {Wk.shape[1]}: a dot "
            f"product needs the same d_k for both."
        )
    if Wq.shape[1] != 2:
        raise ExerciseError(
            f"your projections have d_k = {Wq.shape[1]}; the exercise asks for d_k = 2, two numbers per query "
            f"and key. With more axes the task gets easier; the point is to do it with two."
        )
    if not np.allclose(_X_TOY @ Wk, _X_TOY @ _W_K_NEXT):
        raise ExerciseError(
            f"W_K_next gives the keys {np.round(_X_TOY @ Wk, 2).tolist()} (Sam, ate, red, apple), not the given "
            f"{(_X_TOY @ _W_K_NEXT).astype(int).tolist()}: the keys are given: change only the queries, W_Q_next. "
            f"Run the cell that defines W_K_next again; the grade uses the given keys."
        )
    if draw:
        import matplotlib.pyplot as plt

        from ..plots.projections import keys_and_queries

        keys_and_queries(_X_TOY @ Wq, _X_TOY @ Wk, WORDS)
        plt.show()
    A = _next_word_weights(Wq, Wk)
    right = A[np.arange(4), list(_NEXT)]
    if right.min() >= 0.8 - 1e-9:
        passed("each word gives most of its attention to the word that happens to come next: " + ", ".join(
            f"{WORDS[i]} -> {WORDS[j]} {right[i]:.2f}" for i, j in enumerate(_NEXT)) + ". The pattern goes by "
            "content (person -> action -> colour -> food): reorder the words and it no longer follows the order; "
            "how a layer can see order: lesson 09.")
        return
    Q, K = _X_TOY @ Wq, _X_TOY @ Wk
    S = Q @ K.T
    top = A.argmax(axis=1)
    failing = [k for k in range(4) if right[k] < 0.8 - 1e-9]
    aims = (Wq[:4] @ K.T).argmax(axis=1)      # the word each of the first four rows, read alone, points at
    red_aims_apple = np.linalg.norm(Wq[4]) > 1e-9 and int((Wq[4] @ K.T).argmax()) == 3
    if (np.all(aims == list(_NEXT)) and np.all(np.linalg.norm(Wq[:4], axis=1) > 1e-9)
            and not red_aims_apple):
        raise ExerciseError(
            f"rows 0 to 3 of W_Q_next each point at the key of the word after Sam, ate, red and apple: one "
            f"row per word. But W_Q_next has one row per feature (person, action, food, fruit, red): row 2 is "
            f"food and row 3 fruit, red's query is row 4 ({np.round(Wq[4], 2).tolist()}), and apple's is rows 2 + "
            f"3 + 4 = {np.round(Q[3], 2).tolist()}. Set each row so that these sums point at the next word's key."
        )
    fruit = Wq[3] @ K.T                       # row 3 read as if it were apple's (word 3's) own query
    if (failing == [3] and np.abs(Wq[2]).max() <= 1e-9 and np.linalg.norm(Wq[4]) > 1e-9
            and fruit[0] > fruit[1:].max() + 1e-9):
        raise ExerciseError(
            f"'apple' gives 'Sam' {right[3]:.2f} of its attention. Row 3 (fruit) of W_Q_next, "
            f"{np.round(Wq[3], 2).tolist()}, points at Sam's key, as if it were apple's row: one row per "
            f"word. But W_Q_next has one row per feature, and 'apple' is red too: its query is food + fruit + "
            f"red = {np.round(Q[3], 2).tolist()}, red's row (red's own query) included. That sum must point at "
            f"Sam's key."
        )
    for k in failing:  # a zero query fails whatever the keys: name it first, wherever it is
        if np.allclose(Q[k], 0.0):
            raise ExerciseError(
                f"the query of '{WORDS[k]}' is [0, 0], so it spreads its attention evenly (0.25 on each word). "
                f"A word's query is the sum of the rows of W_Q_next for its features."
            )
    i = min(failing, key=lambda k: right[k])
    where = f"'{WORDS[i]}' gives '{WORDS[_NEXT[i]]}' {right[i]:.2f} of its attention"
    if top[i] != _NEXT[i]:
        where += f", and most to '{WORDS[top[i]]}' ({A[i, top[i]]:.2f})"
    keys = ", ".join(f"{w} {(np.round(K[k], 2) + 0.0).tolist()}" for k, w in enumerate(WORDS))
    nxt = S[np.arange(4), list(_NEXT)]
    rest = S.copy()
    rest[np.arange(4), list(_NEXT)] = -np.inf
    if np.all(nxt > rest.max(axis=1) + 1e-9):
        rival = int(np.argmax(rest[i]))
        aside = ""
        if rest[i, rival] > 1e-9:                # the query points partly at another key as well
            whose = "its own key" if rival == i else f"the key of '{WORDS[rival]}'"
            aside = (f" The query of '{WORDS[i]}', {np.round(Q[i], 2).tolist()}, also points partly at "
                     f"{whose}, {(np.round(K[rival], 2) + 0.0).tolist()} (score {S[i, rival]:.3g}): aim it "
                     f"at the key of '{WORDS[_NEXT[i]]}' alone, and the gap grows with less length.")
        raise ExerciseError(f"{where}: every word already scores the next one highest, but not with 0.8 of its "
                            f"attention. Make the scores' gaps larger (multiply W_Q_next by a bigger number)."
                            + aside)
    tied = [k for k in failing if abs(rest[k].max() - nxt[k]) <= 1e-9]
    if tied:
        k = tied[0]
        c = int(np.argmax(rest[k]))
        text = (f"'{WORDS[k]}' gives '{WORDS[_NEXT[k]]}' {right[k]:.2f} of its attention: it scores "
                f"'{WORDS[c]}' and '{WORDS[_NEXT[k]]}' the same ({nxt[k]:.3g}), so no longer query can separate "
                f"them. The keys are {keys}")
        text += "." if k == 3 else f", and the query of '{WORDS[k]}' is {np.round(Q[k], 2).tolist()}."
        if k == 3:
            rows = " + ".join(f"{f} {np.round(Wq[r], 2).tolist()}" for r, f in ((2, "food"), (3, "fruit"),
                                                                              (4, "red")))
            text += (f" The query of 'apple' is the sum of its rows of W_Q_next, {rows} = "
                     f"{np.round(Q[3], 2).tolist()}: red's row of W_Q_next enters apple's query too.")
        raise ExerciseError(text)
    def who(ks: list[int]) -> str:
        return "every word" if len(ks) == 4 else ", ".join(f"'{WORDS[k]}'" for k in ks[:-1]) + \
            f" and '{WORDS[ks[-1]]}' each"

    def odd_one(ks: list[int]) -> str:   # the word (at most one) outside ks: where its attention goes
        k = next((k for k in range(4) if k not in ks), None)
        return "" if k is None else (f"; 'apple' gives most to '{WORDS[top[k]]}' ({A[k, top[k]]:.2f})"
                                     if k == 3 else f"; '{WORDS[k]}' gives most to '{WORDS[top[k]]}' "
                                     f"({A[k, top[k]]:.2f})")

    selves = [k for k in range(4) if top[k] == k]
    if len(selves) >= 3:  # a query aimed at its own key; apple's may differ, its red row being shared
        own = ", ".join(f"{WORDS[k]} {A[k, k]:.2f}" for k in selves)
        subject = ("every word looks most at itself" if len(selves) == 4 else
                   who(selves)[:-len(" each")] + " look most at themselves")
        raise ExerciseError(f"{subject} ({own})"
                            f"{odd_one(selves)}. A word's query points where its own key points; point it at "
                            f"the next word's key instead.")
    before = [k for k in range(4) if top[k] == (k - 1) % 4]
    if len(before) >= 3:
        back = ", ".join(f"{WORDS[k]} -> {WORDS[(k - 1) % 4]} {A[k, (k - 1) % 4]:.2f}" for k in before)
        raise ExerciseError(f"{who(before)} {'looks' if len(before) == 4 else 'look'} most at the word "
                            f"before it ({back}){odd_one(before)}; turn the queries the other way.")
    if [k for k in range(4) if top[k] != _NEXT[k]] == [3]:
        if top[3] == 2:
            raise ExerciseError(f"{where}. Only 'apple' is wrong: the word after 'apple' is 'Sam' (the sentence "
                                f"wraps around).")
        rows = " + ".join(f"{f} {np.round(Wq[r], 2).tolist()}" for r, f in ((2, "food"), (3, "fruit"), (4, "red")))
        raise ExerciseError(
            f"{where}. Only 'apple' fails: it scores {np.round(S[3], 2).tolist()} (Sam, ate, red, apple). Its "
            f"query is the sum of its rows of W_Q_next, {rows} = {np.round(Q[3], 2).tolist()}, red's row "
            f"included: that sum must point at Sam's key.")
    wrong = [k for k in range(4) if top[k] != _NEXT[k]]
    if len(wrong) == 1 and wrong[0] != 3:            # one word's own row aims elsewhere (apple's is above)
        k = wrong[0]
        row = {0: (0, "person"), 1: (1, "action"), 2: (4, "red")}[k]
        raise ExerciseError(
            f"{where}. The query of '{WORDS[k]}' is its {row[1]} row of W_Q_next (row {row[0]}), "
            f"{np.round(Q[k], 2).tolist()}: it points towards the key of '{WORDS[top[k]]}', "
            f"{(np.round(K[top[k]], 2) + 0.0).tolist()}. The word after '{WORDS[k]}' is "
            f"'{WORDS[_NEXT[k]]}', whose key is {(np.round(K[_NEXT[k]], 2) + 0.0).tolist()}: point the query "
            f"there" + (" (red's row enters apple's query too)." if k == 2 else "."))
    raise ExerciseError(f"{where}. The keys are {keys}. Think of the four keys as four points in the plane and "
                        f"of each query as an arrow towards the next word's key; a word's query is the sum of "
                        f"the rows of W_Q_next for its features, red's row included in apple's.")


# ----------------------------------------------------------------- Exercise 4: our matrices in nn.Linear

_SLOTS = (("W_query", "W_Q", _W_Q), ("W_key", "W_K", _W_K), ("W_value", "W_V", _W_V))


def _layer_parts(layer: Any) -> tuple[list[np.ndarray], list[np.ndarray | None]]:
    """The three weights and biases of a module with parts W_query, W_key, W_value (nn.Linear each)."""
    weights, biases = [], []
    for part, _, _ in _SLOTS:
        linear = getattr(layer, part, None)
        weight = getattr(linear, "weight", None)
        if weight is None:
            raise ExerciseError(f"layer has no {part} with a weight: make layer a SelfAttentionSteps(5, 3, 2) and "
                                f"load the matrices into its three nn.Linear parts.")
        weights.append(weight.detach().cpu().double().numpy())
        bias = getattr(linear, "bias", None)
        biases.append(None if bias is None else bias.detach().cpu().double().numpy())
    return weights, biases


def check_loaded_layer(layer: Any, *parts: Any) -> None:
    """Exercise 4: a SelfAttentionSteps(5, 3, 2) whose three nn.Linear parts hold the lesson's W_Q, W_K, W_V,
    so that layer(x) gives the lesson's Z. ``layer`` is the module; the grader passes instead its six parts as
    data: the weights of W_query, W_key, W_value, then their biases (None where there is none)."""
    if parts:
        if len(parts) != 5:
            raise ExerciseError("expected the layer, or its three weights and three biases.")
        weights = [_to_array(w, name) for w, (name, _, _) in zip((layer, *parts[:2]), _SLOTS, strict=True)]
        biases = [None if b is None else _to_array(b, "bias") for b in parts[2:5]]
        module = None
    else:
        if layer is None or layer is Ellipsis:
            raise ExerciseError("layer has no value yet: make it a SelfAttentionSteps(5, 3, 2), then load "
                                "W_Q, W_K and W_V into its parts.")
        weights, biases = _layer_parts(layer)
        module = layer
    for (part, name, W), weight in zip(_SLOTS, weights, strict=True):
        if weight.shape == W.shape and np.allclose(weight, W):
            raise ExerciseError(
                f"{part}.weight is {name} itself, {W.shape}: nn.Linear computes x @ weight.T, so its weight "
                f"must be {name} transposed, {name}.T, (d_out, d_model) = {W.T.shape}.")
        if weight.shape == W.T.shape and np.allclose(weight, W.reshape(W.T.shape)) and not np.allclose(weight, W.T):
            raise ExerciseError(
                f"{part}.weight holds {name} reshaped to {W.T.shape}: reshape refills the same numbers row by row, "
                f"a transpose swaps rows and columns. Use {name}.T.")
        if weight.shape != W.T.shape:
            raise ExerciseError(f"{part}.weight has shape {weight.shape}; it should be {name}.T, "
                                f"(d_out, d_model) = {W.T.shape}.")
        for other_part, other, W_o in _SLOTS:
            if other != name and W_o.shape == W.shape and np.allclose(weight, W_o.T):
                raise ExerciseError(
                    f"{part}.weight holds {other}.T, the matrix of {other_part}: each part takes its own matrix, "
                    f"{part} takes {name}. With queries and keys swapped the scores are transposed: omega_ji "
                    f"in place of omega_ij.")
        if not np.allclose(weight, W.T):
            raise ExerciseError(
                f"{part}.weight is not {name}.T: it still holds other numbers (a fresh nn.Linear's are random). "
                f"Copy {name}.T into it.")
    for (part, _, _), bias in zip(_SLOTS, biases, strict=True):
        if bias is not None and np.abs(bias).max() > 1e-9:
            raise ExerciseError(
                f"{part} adds a bias {np.round(bias, 3).tolist()}: nn.Linear(d_model, d_out) adds a learned vector "
                f"b, random at first, unless made with bias=False. Our projections are x @ W alone.")
    if module is not None:
        import torch

        x = torch.tensor(_X_TOY, dtype=torch.float32)
        try:
            Z_got = module(x)[0]
        except RuntimeError as err:
            raise ExerciseError(
                f"layer(x) fails: {str(err).splitlines()[0]}. torch.tensor of a NumPy array is float64 and x is "
                f"float32: copy into the existing weight with copy_, which keeps its float32, or give "
                f"dtype=torch.float32.") from None
        Z = reference_softmax((_X_TOY @ _W_Q) @ (_X_TOY @ _W_K).T) @ (_X_TOY @ _W_V)
        if not np.allclose(Z_got.detach().double().numpy(), Z, atol=1e-5):
            raise ExerciseError("the weights are right, but layer(x)[0] is not our Z: is layer a "
                                "SelfAttentionSteps, with forward as the lesson defines it?")
    passed("each part holds its matrix transposed, W_query.weight = W_Q.T (3, 5), W_key.weight = W_K.T (3, 5), "
           "W_value.weight = W_V.T (2, 5), with no bias: layer(x) gives our Z.")
