"""The analogies task set: its size, how questions are asked, and exact scoring."""

from __future__ import annotations

from agentload.quality.tasks import correct, task_conversations, task_size


def test_the_set_has_twenty_questions_from_each_of_fourteen_categories() -> None:
    assert task_size("analogies") == 280
    sources = {c.source for c in task_conversations("analogies", 280, "completions")}
    assert len(sources) == 14


def test_a_few_questions_mix_the_categories() -> None:
    few = task_conversations("analogies", 14, "completions")
    assert len({c.source for c in few}) == 14


def test_a_question_shows_two_examples_of_its_category_then_asks() -> None:
    first = task_conversations("analogies", 1, "completions")[0]
    assert first.prompt == (
        "Athens is to Greece as Baghdad is to Iraq.\n"
        "Athens is to Greece as Bangkok is to Thailand.\n"
        "Athens is to Greece as Havana is to"
    )
    assert first.answer == "Cuba" and first.max_tokens == 4 and not first.force_length


def test_through_chat_the_question_is_an_instruction() -> None:
    first = task_conversations("analogies", 1, "chat")[0]
    assert first.messages is not None
    assert first.messages[0]["content"].startswith("Complete the last line with one word.\n")


def test_only_the_first_word_counts_and_exactly() -> None:
    assert correct(" Cuba.\nAthens", "Cuba")
    assert not correct(" cuba.", "Cuba")
    assert not correct(" The Cuba", "Cuba")
    assert not correct("", "Cuba")


def test_no_example_gives_its_category_s_answers_away() -> None:
    for conversation in task_conversations("analogies", 280, "completions"):
        assert conversation.answer is not None and isinstance(conversation.prompt, str)
        examples = conversation.prompt.rsplit("\n", 1)[0]
        assert f" {conversation.answer}." not in examples
