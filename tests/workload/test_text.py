"""Text materialisation: exact lengths with real tokenizers, salts, chat messages, token ids.

Tolerance stated and tested here: with a tokenizer whose corpus self-check passes (byte-level
BPE such as the project's, WordPiece), a segment's text encodes to exactly `segment.tokens`
tokens, a whole prompt's text to exactly the sum, and `token_ids` equals the encoding of the
text. With one whose counts do not compose (a SentencePiece-style Unigram), each segment is
corrected to exactly its length when made (`verify`), and a whole prompt, where segments meet
and merge differently, stays within `VERIFY_PROMPT_TOLERANCE` (measured: 35 tokens in 8,854).
`token_ids` is exact with every tokenizer.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers

from agentload.engines.tokenizer import corpus_files
from agentload.workload.corpus import Corpus
from agentload.workload.model import ReplySegment, Segment, Session, Turn
from agentload.workload.replies import Replies
from agentload.workload.text import ROLE_HEADERS, WORD_FILL, TextMaker
from agentload.workload.tokenizers import FileTokenizer

LENGTHS = (1, 2, 7, 100, 4096, pytest.param(131_072, marks=pytest.mark.slow))
"""Segment lengths tested; the longest (published agentic prompts reach it) is slow."""
ROLES = ("system", "user", "tool", "assistant")
SMALL_CORPUS_CHARS = 100_000
"""Corpus size for the second tokenizers (their build is not cached on disk)."""
TRAINING_FILES = 15
"""Standard-library files (8,000 characters each) the second tokenizers are trained on."""

VERIFY_PROMPT_TOLERANCE = 0.01
"""Share of a whole prompt's tokens a non-composing tokenizer may be off by."""

MAX_TOKEN_SHARE = 0.2
"""No token may make up more than this share of a text of 100+ tokens."""


@pytest.fixture(scope="session")
def tok(tokenizer_path: Path) -> FileTokenizer:
    return FileTokenizer(tokenizer_path)


@pytest.fixture(scope="session")
def maker(tok: FileTokenizer) -> TextMaker:
    return TextMaker(tok, run_salt="run-A")


def _train(kind: str, out: Path) -> FileTokenizer:
    """A second real tokenizer of another kind, trained in a second on standard-library text."""
    texts = [p.read_text(errors="ignore")[:8000] for p in corpus_files()[:TRAINING_FILES]]
    if kind == "unigram":  # SentencePiece-style: spaces become "▁", no byte-level regex split
        hf = HFTokenizer(models.Unigram())
        hf.pre_tokenizer = pre_tokenizers.Metaspace()
        hf.decoder = decoders.Metaspace()
        trainer = trainers.UnigramTrainer(
            vocab_size=1000, special_tokens=["<unk>"], unk_token="<unk>", show_progress=False
        )
    else:  # BERT-style WordPiece: whitespace is dropped, newlines cost nothing
        hf = HFTokenizer(models.WordPiece(unk_token="[UNK]"))
        hf.normalizer = normalizers.BertNormalizer(lowercase=False)
        hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        hf.decoder = decoders.WordPiece()
        trainer = trainers.WordPieceTrainer(
            vocab_size=2000, special_tokens=["[UNK]"], show_progress=False
        )
    hf.train_from_iterator(texts, trainer=trainer)
    hf.save(str(out))
    return FileTokenizer(out)


@pytest.fixture(scope="session", params=["unigram", "wordpiece"])
def other(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> TextMaker:
    tok = _train(request.param, tmp_path_factory.mktemp(request.param) / "tokenizer.json")
    corpus = Corpus.build(tok, max_chars=SMALL_CORPUS_CHARS)
    return TextMaker(tok, run_salt="run-B", corpus=corpus)


def _session(system_tokens: int = 3000, calls: int = 6) -> Session:
    system = (Segment(key="sys", tokens=system_tokens, role="system", shared=True),)
    turns = [Turn(new_input=(Segment(key="s1/task", tokens=400),), output_tokens=120)]
    for j in range(1, calls):
        turns.append(
            Turn(
                new_input=(Segment(key=f"s1/tool/{j}", tokens=300 + 211 * j, role="tool"),),
                transient=(Segment(key=f"s1/reminder/{j}", tokens=9),) if j % 2 else (),
                output_tokens=40 + 50 * j,
            )
        )
    return Session(id="s1", system=system, turns=tuple(turns))


# --- lengths ------------------------------------------------------------------------------------


def test_corpus_composes_with_the_project_tokenizer(maker: TextMaker) -> None:
    corpus = maker.corpus
    assert corpus.exact and corpus.check_max_error == 0
    assert not maker.verify
    assert corpus.tokens > 300_000  # big enough that a 131K segment is a fraction of it
    assert len(corpus.files) > 20


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("n", LENGTHS)
def test_segment_text_has_exact_length(
    maker: TextMaker, tok: FileTokenizer, n: int, role: str
) -> None:
    for shared in (False, True):
        segment = Segment(key=f"s9/{role}/{n}", tokens=n, role=role, shared=shared)
        text = maker.segment_text(segment, instance=3)
        ids = maker.segment_ids(segment, instance=3)
        assert len(ids) == n
        assert tok.encode(text) == ids.tolist()


@pytest.mark.parametrize("n", [100, 4096, 131_072])
def test_text_is_varied_code_not_one_token(maker: TextMaker, n: int) -> None:
    ids = maker.segment_ids(Segment(key=f"v/{n}", tokens=n, role="tool"), instance=1).tolist()
    top_share = Counter(ids).most_common(1)[0][1] / n
    assert top_share < MAX_TOKEN_SHARE
    assert len(set(ids)) >= min(n // 10, 500)
    text = maker.segment_text(Segment(key=f"v/{n}", tokens=n, role="tool"), instance=1)
    assert "\n" in text and ("def " in text or "import " in text or "=" in text)


def test_every_length_up_to_300_is_exact(maker: TextMaker, tok: FileTokenizer) -> None:
    for n in range(0, 301):
        segment = Segment(key=f"len/{n}", tokens=n, role=ROLES[n % 4])
        assert tok.count(maker.segment_text(segment, instance=n)) == n


@pytest.mark.slow
def test_lengths_beyond_the_corpus_repeat_it(maker: TextMaker, tok: FileTokenizer) -> None:
    n = maker.corpus.tokens + 12_345
    text = maker.segment_text(Segment(key="huge", tokens=n, role="system", shared=True))
    assert tok.count(text) == n


@pytest.mark.slow
def test_few_cut_points_still_exact_with_short_padding(maker: TextMaker) -> None:
    """A tokenizer that rejects every inner cut (as Gemma's does) leaves only clean cuts."""
    c = maker.corpus
    clean_only = dataclasses.replace(
        c, tok_at=c.tok_at[c.clean], char_at=c.char_at[c.clean], clean=np.arange(len(c.clean))
    )
    sparse = TextMaker(maker.tokenizer, run_salt="run-A", corpus=clean_only)
    padding = []
    for i, n in enumerate((300, 4096, 30_000, 131_072) * 5):
        segment = Segment(key=f"c/{i}", tokens=n, role="tool")
        assert maker.tokenizer.count(sparse.segment_text(segment, i)) == n
        padding.append(sparse._layout_for(segment, i).words - sparse.salt_words)
    assert np.mean(padding) < WORD_FILL


@pytest.mark.slow
def test_second_tokenizer_kind(other: TextMaker) -> None:
    tok = other.tokenizer
    for n in (1, 2, 7, 100, 4096):
        for role in ROLES:
            segment = Segment(key=f"o/{role}/{n}", tokens=n, role=role)
            assert tok.count(other.segment_text(segment, instance=5)) == n
            assert len(other.segment_ids(segment, instance=5)) == n


@pytest.mark.slow
def test_second_tokenizer_whole_prompt(other: TextMaker) -> None:
    prompt = list(_session().prompts())[-1]
    messages = other.messages(prompt, instance=2)
    got = other.tokenizer.count("".join(m["content"] for m in messages))
    want = sum(s.tokens for s in prompt)
    tolerance = 0 if other.corpus.exact else VERIFY_PROMPT_TOLERANCE * want
    assert abs(got - want) <= tolerance
    assert len(other.token_ids(prompt, instance=2)) == want


# --- salts and determinism ----------------------------------------------------------------------


def test_same_inputs_same_text(maker: TextMaker, tok: FileTokenizer) -> None:
    again = TextMaker(tok, run_salt="run-A", corpus=maker.corpus)
    for segment in (
        Segment(key="d/1", tokens=5000, role="tool"),
        Segment(key="d/2", tokens=700, role="system", shared=True),
    ):
        assert maker.segment_text(segment, "agent-7") == again.segment_text(segment, "agent-7")


def test_unshared_segments_differ_per_instance_from_the_first_token(maker: TextMaker) -> None:
    segment = Segment(key="u/1", tokens=2000, role="user")
    heads = set()
    for instance in range(50):
        ids = maker.segment_ids(segment, instance)
        heads.add(tuple(ids[: maker.salt_words].tolist()))
    assert len(heads) == 50
    a, b = maker.segment_ids(segment, 1), maker.segment_ids(segment, 2)
    assert a[0] != b[0] or a[1] != b[1]


def test_shared_segments_are_the_same_for_every_instance(maker: TextMaker) -> None:
    segment = Segment(key="sys", tokens=3000, role="system", shared=True)
    assert len({maker.segment_text(segment, i) for i in range(10)}) == 1


def test_run_salt_changes_every_segment(maker: TextMaker, tok: FileTokenizer) -> None:
    other_run = TextMaker(tok, run_salt="run-Z", corpus=maker.corpus)
    for shared in (True, False):
        segment = Segment(key="k", tokens=1000, role="system", shared=shared)
        a, b = maker.segment_ids(segment, 1), other_run.segment_ids(segment, 1)
        assert tuple(a[: maker.salt_words]) != tuple(b[: maker.salt_words])


def test_keys_give_different_text(maker: TextMaker) -> None:
    texts = {maker.segment_text(Segment(key=f"k/{i}", tokens=500), 1) for i in range(20)}
    assert len(texts) == 20


# --- prompts: messages and token ids ------------------------------------------------------------


def test_whole_prompt_is_exact_and_matches_token_ids(maker: TextMaker, tok: FileTokenizer) -> None:
    for prompt in _session().prompts():
        want = sum(s.tokens for s in prompt)
        text = "".join(m["content"] for m in maker.messages(prompt, instance="a1"))
        ids = maker.token_ids(prompt, instance="a1")
        assert len(ids) == want
        assert tok.encode(text) == ids
        assert maker.prompt_text(prompt, instance="a1") == text


def test_history_is_a_prefix_of_the_next_call(maker: TextMaker) -> None:
    prompts = list(_session().prompts())
    for before, after in itertools.pairwise(prompts):
        history = [s for s in before if not s.key.startswith("s1/reminder")]
        a = maker.token_ids(history, instance=4)
        b = maker.token_ids(after, instance=4)
        assert b[: len(a)] == a


def test_messages_shapes(maker: TextMaker) -> None:
    recorded = (
        {"role": "user", "content": "Run the tests."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "3 passed"},
    )
    prompt = [
        Segment(key="sys", tokens=300, role="system", shared=True),
        Segment(key="tools", tokens=200, role="system", shared=True),
        Segment(key="rec/0", tokens=12, role="user", messages=recorded),
        Segment(key="s/task", tokens=50, role="user"),
        ReplySegment("s", 0, 30),
        Segment(key="s/tool/1", tokens=80, role="tool"),
        Segment(key="s/note/1", tokens=10, role="user"),
        ReplySegment("s", 1, 25),
        Segment(key="s/tool/2", tokens=60, role="tool"),
    ]
    reply = {"role": "assistant", "content": "Done.", "tool_calls": [{"id": "x"}]}
    replies = Replies("s")
    replies.add(0, reply)
    out = maker.messages(prompt, instance=1, replies=replies)
    roles = [m["role"] for m in out]
    assert roles == [
        "system", "user", "assistant", "tool", "user", "assistant", "user", "assistant", "user"
    ]  # fmt: skip
    assert out[0]["content"] == maker.segment_text(prompt[0]) + maker.segment_text(prompt[1])
    # The first unshared recorded message carries the instance's salt line; the rest verbatim.
    salt = maker.salt_text(maker._seed(prompt[2], 1))
    assert salt and out[1] == {"role": "user", "content": salt + "Run the tests."}
    assert out[2:4] == [dict(m) for m in recorded[1:]]
    assert out[5] == reply  # the agent's actual reply, substituted
    assert out[6]["content"].count("\n") > 1  # tool output and user note merged
    materialised = out[7]["content"]  # no actual reply given: made-up text of its length
    assert maker.tokenizer.count(materialised) == 25
    assert all(isinstance(m["content"], str) for m in out if m["role"] != "assistant")


def test_tool_output_is_framed_and_replies_replace_ids(maker: TextMaker) -> None:
    tool = Segment(key="f/tool", tokens=400, role="tool")
    text = maker.segment_text(tool, 1)
    second_line = text.split("\n")[1]
    assert second_line.startswith(("$ ", "Tool output"))
    reply = ReplySegment("f", 0, 30)
    ids = maker.token_ids([tool, reply], 1, replies_ids={"f/reply/0": [7, 8, 9]})
    assert ids[-3:] == [7, 8, 9] and len(ids) == 403


def test_recorded_segment_ids_encode_their_text(maker: TextMaker, tok: FileTokenizer) -> None:
    segment = Segment(
        key="rec/1", tokens=5, messages=({"role": "user", "content": "print('hello')"},)
    )
    assert maker.segment_text(segment) == "print('hello')"
    ids = maker.token_ids([segment], instance=3)
    salt = maker.salt_ids(maker._seed(segment, 3)).tolist()
    assert ids == salt + tok.encode("print('hello')")
    assert tok.decode(salt) == maker.salt_text(maker._seed(segment, 3))


def _recorded_session_prompts() -> list[list[Segment]]:
    system = Segment(
        key="agentperf/system/x",
        tokens=20,
        role="system",
        shared=True,
        messages=({"role": "system", "content": "You are a coding agent."},),
    )
    task = Segment(
        key="conv/0/0", tokens=8, messages=({"role": "user", "content": "Fix the bug."},)
    )
    tool = Segment(
        key="conv/1/0",
        tokens=6,
        role="tool",
        messages=({"role": "tool", "tool_call_id": "c", "content": "1 failed"},),
    )
    return [[system, task], [system, task, ReplySegment("conv", 0, 4), tool]]


def test_replays_of_one_recorded_conversation_share_only_the_system_prompt(
    maker: TextMaker,
) -> None:
    """Two agents replaying the same recorded conversation must not hit each other's cache
    beyond the shared system prompt; a second run shares nothing with the first."""
    first, second = _recorded_session_prompts()
    a = maker.messages(second, instance="run.a0.s0")
    b = maker.messages(second, instance="run.a1.s0")
    assert a[0] == b[0]  # the system prompt: shared within the run
    assert a[1]["content"] != b[1]["content"]  # the conversation parts at its first message
    assert a[1]["content"].endswith("Fix the bug.") and b[1]["content"].endswith("Fix the bug.")
    # Within one replay every call extends the one before: the session's own prefix is cached.
    assert maker.messages(first, instance="run.a0.s0") == a[:2]
    assert a[3] == {"role": "tool", "tool_call_id": "c", "content": "1 failed"}  # verbatim
    # Another run salt changes the system prompt too.
    other = TextMaker(maker.tokenizer, run_salt="another-run", corpus=maker.corpus)
    assert other.messages(second, instance="run.a0.s0")[0] != a[0]
    assert other.messages(second, instance="run.a0.s0")[0]["content"].endswith(
        "You are a coding agent."
    )


def test_no_state_kept_per_agent(maker: TextMaker) -> None:
    """Exact mode caches nothing per instance: memory does not grow with agents."""
    prompt = list(_session().prompts())[-1]
    for instance in range(200):
        maker.messages(prompt, instance)
    assert len(maker._layouts) == 0


def test_tiny_corpus_rejects_unusable_tokenizer(tmp_path: Path) -> None:
    hf = HFTokenizer(models.WordLevel({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    hf.save(str(tmp_path / "t.json"))
    with pytest.raises(ValueError, match="single-token words"):
        Corpus.build(FileTokenizer(tmp_path / "t.json"), max_chars=20_000)


def test_corpus_cache_round_trips(tmp_path: Path, maker: TextMaker) -> None:
    corpus = maker.corpus
    corpus.save(tmp_path / "c.npz")
    loaded = Corpus.load(tmp_path / "c.npz", corpus.tokenizer_name)
    assert loaded.text == corpus.text and loaded.words == corpus.words
    assert np.array_equal(loaded.ids, corpus.ids) and np.array_equal(loaded.clean, corpus.clean)
    assert loaded.exact == corpus.exact


def test_batched_layouts_and_word_lines_equal_one_at_a_time(maker: TextMaker) -> None:
    """A prompt's segments are laid out in one numpy batch; the text must not change."""
    rng = random.Random(5)
    sizes = [0, 1, 2, 5, 7, 8, 12, 40, 300, 5000, maker.corpus.tokens - 1, maker.corpus.tokens]
    sizes += [maker.corpus.tokens * 2 + 17, 131_072]
    items = [
        (rng.getrandbits(64), rng.choice(list(ROLE_HEADERS)), rng.choice(sizes))
        for _ in range(2000)
    ] + [(rng.getrandbits(64), "tool", rng.randrange(1, 200_000)) for _ in range(2000)]
    batch = maker._layout_batch(items)
    assert batch == [maker._layout(*item) for item in items]
    assert maker._word_batch(batch) == [maker._word_indices(layout) for layout in batch]
