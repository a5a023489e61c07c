"""Small statistics of lesson 11 (a real transformer), kept out of the lesson's reading path: the cosine of
every pair of vectors, the masks that sort those pairs by label, an exact permutation test, and one head's
strongest weight from a word; and lesson 11's lean of "apple", reused by lesson 12.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["BANK_CELLS", "apple_tech_move", "apple_tech_moves", "bank_cell_leans", "cell_table", "cosine",
           "cosines", "difference_p", "gap", "gap_test", "lean_centres", "pair_masks", "permutation_p",
           "sense_topic_effects", "sign_flip_p", "stand_in_leans", "strongest_other", "unit",
           "held_out_centre_leans", "link_weights"]


def _labels(labels: ArrayLike) -> np.ndarray:
    a = np.asarray(labels)
    if a.ndim != 1 or a.size < 2 or not np.isin(a, (0, 1)).all():
        raise ValueError(f"labels must be a 1-D array of 0s and 1s with at least 2 entries, got {a!r}")
    return a.astype(int)


def cosines(vectors: ArrayLike) -> np.ndarray:
    """The cosine of every pair of n vectors, at each of L states.

    Inputs:
        vectors: (n, L, d), n items (sentences) with a d-dimensional vector at each of L states.
    Returns:
        (L, n, n): ``[l, s, t]`` is the cosine of item s's and item t's vectors at state l.
    """
    v = np.asarray(vectors, dtype=float)
    if v.ndim != 3:
        raise ValueError(f"vectors must have shape (n, L, d), got shape {v.shape}")
    unit = v / np.linalg.norm(v, axis=-1, keepdims=True)
    return np.einsum("sld,tld->lst", unit, unit)


def pair_masks(labels: ArrayLike, names: Sequence[str]) -> dict[str, np.ndarray]:
    """(n, n) boolean masks, each unordered pair of items once: ``"a-a"`` pairs two items labelled 0,
    ``"b-b"`` two labelled 1, ``"a-b"`` one of each (``names = ("a", "b")``)."""
    y = _labels(labels)
    if len(names) != 2:
        raise ValueError(f"names must name the two labels, got {names!r}")
    upper = np.triu(np.ones((len(y), len(y)), dtype=bool), k=1)
    a, b = names
    return {f"{a}-{a}": upper & (y[:, None] == 0) & (y == 0),
            f"{b}-{b}": upper & (y[:, None] == 1) & (y == 1),
            f"{a}-{b}": (y[:, None] == 0) & (y == 1)}


def permutation_p(statistic: Callable[[np.ndarray], float], labels: ArrayLike) -> tuple[float, int]:
    """An exact permutation test: ``statistic`` of every relabelling with the same group sizes.

    Inputs:
        statistic: a function of an (n,) array of 0s and 1s, returning a number;
        labels: the true (n,) labels.
    Returns:
        (p, N): the share p of the N relabellings (the true one included) whose statistic is at least the
        true labels' one, so p * N of them reach it and p is never below 1 / N.
    """
    y = _labels(labels)
    true, found = statistic(y), []
    for chosen in itertools.combinations(range(len(y)), int((y == 0).sum())):
        relabelled = np.ones(len(y), dtype=int)
        relabelled[list(chosen)] = 0
        found.append(statistic(relabelled))
    return float(np.mean(np.array(found) >= true - 1e-12)), len(found)


def gap(cos: ArrayLike, labels: ArrayLike) -> float:
    """Mean cosine of the pairs within a group minus the mean across groups, each pair once.

    Inputs:
        cos: (n, n) cosines of n items (one hidden state of :func:`cosines`); labels: (n,) 0s and 1s.
    """
    c, y = np.asarray(cos, dtype=float), _labels(labels)
    if c.shape != (len(y), len(y)):
        raise ValueError(f"cos must have shape ({len(y)}, {len(y)}) to match labels, got shape {c.shape}")
    upper = np.triu(np.ones(c.shape, dtype=bool), k=1)
    same = y[:, None] == y
    return float(c[upper & same].mean() - c[upper & ~same].mean())


def gap_test(cos: ArrayLike, labels: ArrayLike) -> tuple[float, float, int]:
    """:func:`gap` of the true labels and its exact permutation test (:func:`permutation_p`).

    Returns:
        (gap, p, N): p is the share of the N relabellings whose gap is at least the true one.
    """
    p, n = permutation_p(lambda relabelled: gap(cos, relabelled), labels)
    return gap(cos, labels), p, n


def difference_p(a: ArrayLike, b: ArrayLike) -> float:
    """Exact permutation test of ``mean(a) - mean(b)``: the share of the ways to split the values of a and b
    into groups of their sizes whose difference of means is at least the true one.

    Inputs:
        a: (n,) values; b: (m,) values.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"a and b must be 1-D arrays, got shapes {a.shape} and {b.shape}")
    both = np.concatenate([a, b])
    labels = np.repeat([0, 1], [len(a), len(b)])
    return permutation_p(lambda y: both[y == 0].mean() - both[y == 1].mean(), labels)[0]


def strongest_other(model: Any, sentence: str, word: str, layer: int, head: int) -> tuple[float, str, float]:
    """One head's weights from ``word`` (its first token) in ``sentence``: the largest weight on another
    real token ([CLS], [SEP] and the word itself left out), that token, and the weight on [CLS].

    Returns:
        (largest weight on another token, that token, weight on [CLS]).
    """
    r = model.run(sentence)
    tokens = r["tokens"]
    if word not in tokens:
        raise ValueError(f"word {word!r} is not a whole token of {sentence!r}; its tokens are {tokens}")
    i = tokens.index(word)
    row = r["attentions"][layer][head, i].numpy()
    others = [j for j in range(1, len(tokens) - 1) if j != i]
    if not others:
        raise ValueError(f"sentence {sentence!r} has no token besides {word!r}")
    j = max(others, key=lambda k: row[k])
    return float(row[j]), tokens[j], float(row[0])


def cosine(u: ArrayLike, v: ArrayLike) -> float:
    """The cosine of two 1-D vectors of the same length (lesson 01)."""
    a, b = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"u and v must be 1-D vectors of one length, got shapes {a.shape} and {b.shape}")
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


TECH_WORDS = ("phone", "laptop", "computer", "tablet", "keyboard", "software", "screen", "printer")
FRUIT_WORDS = ("banana", "orange", "grape", "pear", "cherry", "peach", "mango", "plum")
APPLE_TECH = ("apple released a new phone today", "apple laptops are expensive", "my apple laptop crashed",
              "the apple watch tracks my sleep", "i love apple phones", "she updated her apple tablet",
              "he bought the apple computer online", "we wrote software for the apple store")
PLAIN_NOUNS = ("box", "paper", "glass", "wood", "metal", "plastic", "stone", "toy", "chair", "door",
               "book", "shoe", "hat", "bag", "coin", "rope", "ribbon", "brick", "candle", "blanket",
               "pillow", "bucket", "wheel", "mirror", "ring", "shell", "feather", "rock", "clock", "lamp",
               "pen", "pencil", "sock", "shirt", "jacket", "ball", "kite", "drum", "flag", "bell", "nail",
               "hammer", "brush", "towel", "sponge", "tent", "boat", "car", "bike", "horse", "dog", "cat",
               "bird", "stick", "log", "mat", "rug", "sofa", "bed", "desk", "shelf", "star", "moon", "sun",
               "river", "hill")
"""Lesson 11's pool of control nouns: everyday words the tokenizer keeps whole, with no fruit, food, plant or
technology sense ("window", "key", "button", "card", "cloud" left out for their computing senses)."""
BRANDS = ("nike", "disney", "toyota", "pepsi", "ford", "starbucks", "honda", "heinz", "kellogg", "audi",
          "nissan", "lego", "volvo", "ferrari", "porsche", "boeing", "mazda", "guinness", "hilton",
          "marriott", "sony", "google", "samsung", "dell", "intel", "nokia", "microsoft", "amazon", "ibm",
          "netflix", "motorola", "nintendo")
"""Company names the tokenizer keeps whole (one token each), technology companies and others: a pool for
lesson 11's Exercise 4."""
APPLE_FOOD = ("apple pie is my favourite dessert", "apple juice spilled everywhere",
              "the apple fell from the tree", "the apple tasted sweet and crisp", "i love apple juice",
              "she peeled the apple", "he baked the apple crumble tonight",
              "we picked fruit from the apple tree")
APPLE_NEUTRAL = ("apple is an english word", "apple was the next word", "say apple twice",
                 "write apple on the board", "i said apple twice", "i wrote down apple",
                 "she spelled out apple", "we spelled out the word apple")

LINK_FRAMES = ("the apple phones were muddy after the football match",
               "my apple phones fell in the river by the farm",
               "our apple phones got wet in the storm last night",
               "his apple phones sat beside the soup and bread",
               "your apple phones played loud music at the wedding",
               "their apple phones went with the soldiers to war",
               "the apple phones lay by the patient in the hospital",
               "her apple phones came along on the beach holiday")
"""Lesson 11's test of a layer-0 link: "apple phones" at tokens 2 and 3 of 8 sentences on 8 topics (sport, a
farm, weather, food, a wedding, war, a hospital, a holiday)."""

_BANK_STARTS = ("the", "we sat by the", "she walked to the", "they met at the", "he waited near the",
                "i stood beside the", "the old", "everyone went to the")
_BANK_CUES = {"river": ("river", "grassy", "muddy", "river", "steep", "grassy", "muddy", "river"),
              "money": ("savings", "central", "investment", "savings", "commercial", "savings", "central",
                        "investment")}
_BANK_ENDS = {
    "nature": ("among the reeds, frogs and ducks", "where birds sang in the oak trees",
               "as the fish jumped and the geese flew", "under willows full of nesting swallows",
               "while deer grazed on the wild flowers", "watching otters swim past the ferns",
               "covered in moss, ferns and wild flowers", "near the forest, where foxes hunt rabbits"),
    "finance": ("among the brokers, loans and mortgages", "where traders discussed the stock prices",
                "as the interest rates rose and shares fell", "under pressure from investors and creditors",
                "while auditors checked the loans and debts", "watching profits, dividends and tax payments",
                "covered in debt, loans and unpaid taxes",
                "near the stock exchange, where traders buy shares"),
}
BANK_CELLS = {(sense, topic): tuple(f"{start} {cue} bank {end}" for start, cue, end in
                                    zip(_BANK_STARTS, _BANK_CUES[sense], _BANK_ENDS[topic], strict=True))
              for sense in ("river", "money") for topic in ("nature", "finance")}
"""Lesson 11's 2 x 2 design: (sense, topic) -> 8 sentences. The word before "bank" sets its sense ("muddy
bank", "savings bank"), the words after it the topic; sentence i of the four cells shares its start, so "bank"
sits at the same token position in all four."""


def lean_centres(model: Any, layer: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """Lesson 11's tech and fruit centres: the mean vector at hidden state ``layer`` (default: the last
    layer's output) of each of 8 words in "the ___ was on the table", at unit length. Returns two (d_model,)
    arrays: (tech, fruit)."""
    out = []
    for words in (TECH_WORDS, FRUIT_WORDS):
        c = np.mean([model.contextual_vector(f"the {w} was on the table", w, layer).numpy() for w in words],
                    axis=0)
        out.append(c / np.linalg.norm(c))
    return out[0], out[1]


def leans_at(model: Any, sentences: Sequence[str], word: str, layer: int) -> np.ndarray:
    """The tech lean, cos(h, c_tech) - cos(h, c_fruit), of ``word`` in each sentence at hidden state
    ``layer``, with both centres (:func:`lean_centres`) taken at that same hidden state.
    Returns (len(sentences),)."""
    tech, fruit = lean_centres(model, layer)
    v = unit(model.contextual_vectors(list(sentences), word, layer).numpy().astype(float))
    return v @ tech - v @ fruit


def pair_score(model: Any, sentence: str, word: str, target: str, layer: int,
               head: int) -> tuple[float, float]:
    """One head's score omega_ij = q_i . k_j / sqrt(d_k) from ``word``'s token i to ``target``'s token j
    (first occurrences, whole tokens) in ``sentence``, and its weight alpha_ij (the softmax of row i of the
    scores).

    Returns:
        (omega_ij, alpha_ij).
    """
    import torch

    r = model.run(sentence)
    tokens = r["tokens"]
    for w in (word, target):
        if w not in tokens:
            raise ValueError(f"{w!r} is not a whole token of {sentence!r}; its tokens are {tokens}")
    i, j = tokens.index(word), tokens.index(target)
    attention = model.model.encoder.layer[layer].attention.self
    d_k = int(attention.attention_head_size)
    cols = slice(head * d_k, (head + 1) * d_k)
    with torch.no_grad():
        x = r["hidden"][layer]                                           # (T, d_model), what enters the layer
        q, k = attention.query(x)[i, cols], attention.key(x)[j, cols]
    return float(q @ k) / float(np.sqrt(d_k)), float(r["attentions"][layer][head, i, j])


def link_weights(model: Any, sentences: Sequence[str], word: str,
                 targets: set[str] | frozenset[str]) -> np.ndarray:
    """The weight alpha_ij that ``word``'s token i puts on token j, the first token of each sentence that is
    in ``targets``, in every head of every layer. Returns (len(sentences), layers, heads)."""
    out = []
    for s in sentences:
        r = model.run(s)
        i = r["tokens"].index(word)
        j = next(k for k, t in enumerate(r["tokens"]) if t in targets)
        out.append(np.stack([A.numpy()[:, i, j] for A in r["attentions"]]))
    return np.array(out, dtype=float)


def held_out_centre_leans(model: Any) -> tuple[np.ndarray, np.ndarray]:
    """The tech lean of each word that makes the centres, in "the ___ was on the table", with that word left
    out of its own centre (the mean of the other 7, at unit length; the other centre whole), so that no word
    is measured against a centre it helped to make. Returns (tech words' (8,) leans, fruit words' (8,))."""
    def vectors(words: Sequence[str]) -> np.ndarray:
        return unit(np.array([model.contextual_vector(f"the {w} was on the table", w).numpy() for w in words],
                             dtype=float))

    tech, fruit = vectors(TECH_WORDS), vectors(FRUIT_WORDS)
    out = []
    for own, other, sign in ((tech, fruit, 1.0), (fruit, tech, -1.0)):
        rest = unit(other.mean(0))
        out.append(np.array([sign * (own[i] @ unit(np.delete(own, i, 0).mean(0)) - own[i] @ rest)
                             for i in range(len(own))]))
    return out[0], out[1]


def apple_tech_moves(model: Any, centres: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Lesson 11's move of "apple" towards tech, sentence by sentence: its lean (cosine to the tech centre
    minus cosine to the fruit centre) in each of the 8 technology sentences minus its mean lean in the 8
    neutral ones. ``centres`` is :func:`lean_centres`'s pair; the model runs as it is (with any hooks set
    on it).

    Returns:
        (8,) one move per technology sentence.
    """
    tech, fruit = (np.asarray(c, dtype=float) for c in centres)
    if tech.ndim != 1 or tech.shape != fruit.shape:
        raise ValueError(f"centres must be two 1-D arrays of one length, got shapes {tech.shape} and "
                         f"{fruit.shape}")

    def lean(sentences: Sequence[str]) -> np.ndarray:
        v = model.contextual_vectors(list(sentences), "apple").numpy().astype(float)     # (8, d_model)
        v = v / np.linalg.norm(v, axis=1, keepdims=True)
        return v @ tech - v @ fruit

    return lean(APPLE_TECH) - lean(APPLE_NEUTRAL).mean()


def apple_tech_move(model: Any, centres: tuple[np.ndarray, np.ndarray]) -> float:
    """The mean of :func:`apple_tech_moves`: apple's mean lean in the 8 technology sentences minus its mean
    lean in the 8 neutral ones."""
    return float(apple_tech_moves(model, centres).mean())


def cell_table(leans: dict[tuple[str, str], ArrayLike], title: str = "money lean") -> str:
    """Lesson 11's 2 x 2 table: ``leans`` maps (sense, topic) to one lean per sentence; returns the table as
    text, each cell's mean and range (min to max), the cue word's sense in rows ("river cue", "money cue"),
    topics in columns."""
    senses = list(dict.fromkeys(k[0] for k in leans))
    topics = list(dict.fromkeys(k[1] for k in leans))
    missing = [(s, t) for s in senses for t in topics if (s, t) not in leans]
    if missing:
        raise ValueError(f"leans must hold every (sense, topic) cell, got no value for {missing}")
    lines = [f"{title:16}" + "".join(f"{t + ' words after it':>30}" for t in topics)]
    for s in senses:
        cells = [np.asarray(leans[s, t], dtype=float) for t in topics]
        text = [f"{c.mean():+.3f} ({c.min():+.3f} to {c.max():+.3f})" for c in cells]
        lines.append(f"{s + ' cue':16}" + "".join(f"{t:>30}" for t in text))
    return "\n".join(lines)


def unit(vectors: ArrayLike) -> np.ndarray:
    """Each vector (the last axis) divided by its length: (..., d) -> (..., d) unit vectors."""
    v = np.asarray(vectors, dtype=float)
    if v.ndim == 0 or v.shape[-1] == 0:
        raise ValueError(f"vectors must have a last axis of length >= 1, got shape {v.shape}")
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def bank_cell_leans(model: Any, word: str, money: Sequence[str],
                    river: Sequence[str]) -> dict[tuple[str, str], np.ndarray]:
    """Lesson 11's 2 x 2 design with ``word`` in bank's place (``word="bank"`` for bank itself).

    The money lean of a last-layer vector h is cos(h, c_money) - cos(h, c_river), where c_money and
    c_river are the unit means of ``word``'s vectors in the sentences ``money`` and ``river`` (section 2's
    8 + 8, "bank" replaced by ``word``).

    Returns:
        (sense, topic) -> (8,) the money lean of ``word`` in each of :data:`BANK_CELLS`' sentences.
    """
    def vectors(sentences: Sequence[str]) -> np.ndarray:
        return unit(model.contextual_vectors([s.replace("bank", word) for s in sentences], word).numpy())

    to_money, to_river = unit(vectors(money).mean(0)), unit(vectors(river).mean(0))
    return {cell: vectors(S) @ to_money - vectors(S) @ to_river for cell, S in BANK_CELLS.items()}


def sense_topic_effects(leans: dict[tuple[str, str], ArrayLike]) -> tuple[np.ndarray, np.ndarray]:
    """The two effects of :func:`bank_cell_leans`' table, sentence by sentence.

    Sense effect: money minus river sense, averaged over the two topics; topic effect: finance minus nature
    words, averaged over the two senses.

    Returns:
        (sense effect, topic effect), each (8,), one value per sentence. Lesson 11 calls the first the cue
        effect: a cue word next to "bank" sets its sense.
    """
    L = {k: np.asarray(v, dtype=float) for k, v in leans.items()}
    sense = (L["money", "nature"] + L["money", "finance"] - L["river", "nature"] - L["river", "finance"]) / 2
    topic = (L["river", "finance"] + L["money", "finance"] - L["river", "nature"] - L["money", "nature"]) / 2
    return sense, topic


def sign_flip_p(differences: ArrayLike) -> float:
    """Exact two-sided sign-flip test of paired differences (n <= 20): the share of the 2**n ways to flip
    their signs whose mean is at least as far from 0 as the observed mean."""
    d = np.asarray(differences, dtype=float).ravel()
    if not 1 <= d.size <= 20:
        raise ValueError(f"differences must hold 1 to 20 values, got {d.size}")
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=d.size)))        # (2**n, n)
    return float(np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-12))


def stand_in_leans(lean: Callable[[Sequence[str], str], np.ndarray], groups: dict[str, Sequence[str]],
                   words: Sequence[str], target: str = "apple") -> dict[str, np.ndarray]:
    """Each word of ``words`` in ``target``'s place in every sentence of each group.

    ``lean(sentences, word)`` gives (n,) leans of ``word`` in the sentences.

    Returns:
        group -> (len(words), n) leans, one row per word.
    """
    return {g: np.array([lean([s.replace(target, w) for s in S], w) for w in words])
            for g, S in groups.items()}


# ---------------------------------------------------------------- lesson 11's printed tables
def pair_table(cos: ArrayLike, pairs: dict[str, np.ndarray], others: ArrayLike) -> str:
    """Lesson 11, section 2: per pair group, its number of pairs, last-state mean and range and ``hidden[0]``
    mean; then the baseline ``others`` (cosines of different words from different sentences).

    Inputs:
        cos: (L, n, n) cosines per state (:func:`cosines`); pairs: name -> (n, n) mask (:func:`pair_masks`).
    """
    c = np.asarray(cos, dtype=float)
    lines = []
    for name, mask in pairs.items():
        last, first = c[-1][mask], c[0][mask]
        lines.append(f"{name}: {last.size} pairs, last layer mean {last.mean():.3f} (range {last.min():.3f} "
                     f"to {last.max():.3f}); hidden[0] mean {first.mean():.3f}")
    o = np.asarray(others, dtype=float)
    lines.append(f"baseline: {o.size} pairs of different words from different sentences, last layer mean "
                 f"{o.mean():.3f} (range {o.min():.3f} to {o.max():.3f})")
    return "\n".join(lines)


def gap_table(cos_by_name: dict[str, ArrayLike], labels: ArrayLike) -> str:
    """One line per entry: :func:`gap_test` of its (n, n) cosines against ``labels``, as a count of the
    labellings that reach the gap and as p."""
    lines = []
    for name, c in cos_by_name.items():
        g, p, n = gap_test(c, labels)
        lines.append(f"{name}: gap {g:+.3f}, {p * n:5.0f} of {n} labellings reach it (p = {p:.5f})")
    return "\n".join(lines)


def nearest_start(lean: Callable[[Sequence[str], str], np.ndarray], words: Sequence[str], start: float,
                  k: int = 8, sentences: Sequence[str] = APPLE_NEUTRAL, target: str = "apple") -> list[str]:
    """The ``k`` words whose mean lean in ``sentences`` (each in ``target``'s place) is nearest ``start``,
    chosen before any move is measured."""
    mean = {w: float(lean([s.replace(target, w) for s in sentences], w).mean()) for w in words}
    return sorted(mean, key=lambda w: abs(mean[w] - start))[:k]


def lean_table(word: dict[str, np.ndarray], groups: dict[str, Sequence[str]],
               stand_in: dict[str, dict[str, np.ndarray]], controls: dict[str, Sequence[str]],
               name: str = "apple", baseline: str = "neutral") -> str:
    """Lesson 11, section 3: the word's lean in each sentence of each group, then each control list's
    starting (``baseline``) leans against the word's."""
    lines = [f"{g:10} (e.g. {S[4]!r}) {name}'s lean in each sentence: {np.round(word[g], 2)}"
             for g, S in groups.items()]
    for c, words in controls.items():
        first = np.asarray(stand_in[c][baseline]).mean(axis=1)
        lines.append(f"mean {baseline} lean: {name} {word[baseline].mean():+.3f}; {c} {first.min():+.3f} to "
                     f"{first.max():+.3f} {list(words)}")
    return "\n".join(lines)


def centre_check(model: Any, lean: Callable[[Sequence[str], str], np.ndarray],
                 free: Sequence[str] = ("device", "camera", "monitor")) -> str:
    """Lesson 11: the centres' own words, each against a centre made without it, and tech words in no centre
    (in "the ___ was on the table"): how far a word that is tech leans."""
    tech, fruit = held_out_centre_leans(model)
    alone = [round(float(lean([f"the {w} was on the table"], w)[0]), 2) for w in free]
    return (f"the centres' words, each against a centre made without it: tech {np.round(tech, 2)} fruit "
            f"{np.round(fruit, 2)}\ntech words in no centre: {alone}")


def move_table(word: dict[str, np.ndarray], stand_in: dict[str, dict[str, np.ndarray]], name: str = "apple",
               baseline: str = "neutral", toward: Sequence[tuple[str, int]] = (("technology", 1),
                                                                                ("food", -1))) -> str:
    """Lesson 11, section 3: the baseline's spread; each move (a group's mean lean minus the baseline's),
    its permutation test, and each control list's moves (each word against its own baseline)."""
    b = np.asarray(word[baseline], dtype=float)
    lines = [f"{name}'s {baseline} lean (the baseline): mean {b.mean():+.3f}, range {b.min():+.3f} to "
             f"{b.max():+.3f}, sd {b.std():.3f}"]
    for g, sign in toward:
        move = word[g].mean() - b.mean()
        lines.append(f"{g}: {name} moves {move:+.3f} (p = {difference_p(sign * word[g], sign * b):.5f})")
        for c, leans in stand_in.items():
            moves = np.asarray(leans[g]).mean(axis=1) - np.asarray(leans[baseline]).mean(axis=1)
            lines.append(f"   the {len(moves)} {c} move {moves.min():+.3f} to {moves.max():+.3f} (mean "
                         f"{moves.mean():+.3f}); {(sign * moves >= sign * move).sum()} of {len(moves)} as "
                         f"far as {name}")
    return "\n".join(lines)


def head_table(model: Any, groups: dict[str, Sequence[str]], layer: int, head: int, nouns: Sequence[str],
               word: str = "apple") -> str:
    """Lesson 11, section 4: per group, the largest weight ``word`` puts on another word in one head (mean and
    range), its weight on [CLS], the matched nouns' largest weight in its place, and the word chosen."""
    lines = []
    for g, S in groups.items():
        found = [strongest_other(model, s, word, layer, head) for s in S]          # (weight, token, on [CLS])
        top = np.array([f[0] for f in found])
        per_noun = np.array([[strongest_other(model, s.replace(word, w), w, layer, head)[0] for s in S]
                             for w in nouns]).mean(axis=1)
        on_cls = np.mean([f[2] for f in found])
        lines.append(f"{g:10} {word}: largest weight on another word {top.mean():.2f} ({top.min():.2f} to "
                     f"{top.max():.2f}), on [CLS] {on_cls:.2f} | matched nouns in its place: per noun "
                     f"{per_noun.min():.2f} to {per_noun.max():.2f}")
        lines.append(f"           the word {word} weighs most: {[f[1] for f in found]}")
    return "\n".join(lines)


def effect_table(effect: dict[str, tuple[np.ndarray, np.ndarray]], word: str = "bank") -> str:
    """Lesson 11's 2 x 2 design: per word, the cue effect (money minus river cue word next to it) and the
    topic effect (finance minus nature words after it), mean and range over the sentences; for each control
    word, ``word``'s cue effect minus its own (the part of the cue effect that is ``word``'s own) and in how
    many sentences ``word``'s effects are larger."""
    b_cue, b_topic = effect[word]
    lines = []
    for w, (cue, topic) in effect.items():
        line = (f"{w:6} cue effect {cue.mean():+.3f} ({cue.min():+.3f} to {cue.max():+.3f}), topic "
                f"{topic.mean():+.3f} ({topic.min():+.3f} to {topic.max():+.3f})")
        if w != word:
            line += (f" | {word} minus it: cue {b_cue.mean() - cue.mean():+.3f} ({word} larger in "
                     f"{(b_cue > cue).sum()} of {len(cue)}), topic {b_topic.mean() - topic.mean():+.3f}")
        lines.append(line)
    return "\n".join(lines)


def state_lean_table(by_state: dict[str, dict[str, np.ndarray]], name: str = "apple",
                     group: str = "technology", baseline: str = "neutral") -> str:
    """Lesson 11: per hidden state, the word's move (``group``'s mean lean minus ``baseline``'s) with its
    permutation test, and its lean in ``group``'s sentences (mean and range)."""
    lines = []
    for state, leans in by_state.items():
        t, b = np.asarray(leans[group], dtype=float), np.asarray(leans[baseline], dtype=float)
        lines.append(f"{state}: {name} moves {t.mean() - b.mean():+.3f} (p = {difference_p(t, b):.5f}); its "
                     f"lean in {group} sentences {t.mean():+.3f} ({t.min():+.3f} to {t.max():+.3f})")
    return "\n".join(lines)


def free_tech_leans(model: Any, layer: int, words: Sequence[str] = ("device", "camera", "monitor")) -> str:
    """Lesson 11: the tech lean at hidden state ``layer`` of tech words that are in no centre, each in
    "the ___ was on the table", as a range."""
    free = [float(leans_at(model, [f"the {w} was on the table"], w, layer=layer)[0]) for w in words]
    return f"hidden[{layer}]: tech words in no centre lean {min(free):+.3f} to {max(free):+.3f}"
